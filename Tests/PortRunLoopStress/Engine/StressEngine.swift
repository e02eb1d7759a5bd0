#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopKit
import Synchronization

/// Runs the stress suite: rounds of K consumer loops fed by N producers × M operations with chaos,
/// each round verified on its own, until one round (or `duration` seconds) is done.
///
/// Used both by the `portrunloop-stress` tool (full size) and by the test suite (small size).
///
/// Thread-safety: `Sendable`; ``run(_:)`` may be called from any thread without a run loop of its own.
public enum StressEngine {
    /// Runs `configuration` and returns what happened. A round that hangs past
    /// ``StressConfiguration/roundTimeout`` aborts the process with a diagnostic naming the seed
    /// and what each producer was doing: a deadlock must never look like a slow pass.
    ///
    /// Thread-safety: any thread.
    public static func run(_ configuration: StressConfiguration,
                           progress: ((String) -> Void)? = nil) -> StressReport {
        precondition(configuration.producers >= 1 && configuration.producers <= StressTag.maxProducers,
                     "StressEngine: producers must be in 1...\(StressTag.maxProducers)")
        precondition(configuration.itemsPerProducer >= 0 && configuration.itemsPerProducer <= StressTag.maxItems,
                     "StressEngine: items per producer must be in 0...\(StressTag.maxItems)")
        precondition(configuration.loops >= 1 && configuration.portsPerLoop >= 1, "StressEngine: need at least one loop and one port per loop")
        precondition(configuration.pipesPerLoop >= 0, "StressEngine: pipes per loop must not be negative")
        var report = StressReport(configuration: configuration)
        let start = System.monotonic()
        var roundIndex = 0
        repeat {
            let round = StressRound(config: configuration, index: roundIndex)
            let thisRound = roundIndex
            let finished = Latch()
            let watchdog = JoinableThread(name: "stress-watchdog") {
                if !finished.wait(seconds: configuration.roundTimeout) {
                    var state = round.progress.withLock { $0 }.enumerated().map { "  p\($0.offset): \($0.element)" }
                    if round.fileDescriptors != nil || round.timers != nil || round.callouts != nil {
                        state.append("  fd/timer/callout chaos or round end: \(round.sourceProgress.withLock { $0 })")
                    }
                    let text = "portrunloop-stress: HANG — round \(thisRound) did not finish within "
                        + "\(configuration.roundTimeout)s (seed \(configuration.seed)).\n" + state.joined(separator: "\n") + "\n"
                    FileHandle.standardError.write(Data(text.utf8))
                    StressEngine.dumpThreadsIfRequested()
                    abort()
                }
            }
            let logs = round.run()
            finished.open()
            watchdog.join()
            var roundReport = StressReport(configuration: configuration)
            StressVerifier(round: round, logs: logs).verify(into: &roundReport)
            report.absorb(roundReport)
            roundIndex += 1
            report.rounds = roundIndex
            report.elapsed = System.monotonic() - start
            progress?(String(format: "round %d: %@ (%.1fs)", roundIndex - 1,
                             roundReport.passed ? "ok" : "FAIL \(roundReport.violations.count) violation(s)", report.elapsed))
        } while configuration.duration.map { report.elapsed < $0 } ?? false
        return report
    }
}

extension StressEngine {
    /// With `PORTRUNLOOP_STRESS_GDB=1`, prints every thread's native stack (gdb in batch mode)
    /// before a hang aborts the run, to show who waits on whom.
    static func dumpThreadsIfRequested() {
        guard ProcessInfo.processInfo.environment["PORTRUNLOOP_STRESS_GDB"] == "1" else { return }
        let gdb = Process()
        gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
        gdb.arguments = ["-p", "\(getpid())", "-batch", "-ex", "thread apply all bt 40"]
        try? gdb.run()
        gdb.waitUntilExit()
    }
}

extension StressReport {
    mutating func absorb(_ other: StressReport) {
        sendsAccepted += other.sendsAccepted; sendsRejected += other.sendsRejected
        messagesDelivered += other.messagesDelivered; messagesDiscarded += other.messagesDiscarded
        performsAccepted += other.performsAccepted; performsRejected += other.performsRejected; performsRun += other.performsRun
        callsReturned += other.callsReturned; callsRethrew += other.callsRethrew
        submits += other.submits; actorHops += other.actorHops
        callsShutDown += other.callsShutDown; callsTimedOut += other.callsTimedOut
        relayCallsSucceeded += other.relayCallsSucceeded; relayCallsFailed += other.relayCallsFailed
        notificationsPosted += other.notificationsPosted; notificationsDelivered += other.notificationsDelivered
        observersAdded += other.observersAdded; observersRemoved += other.observersRemoved
        portInvalidations += other.portInvalidations; loopStops += other.loopStops; consumerExits += other.consumerExits
        threadsStarted += other.threadsStarted; threadsJoined += other.threadsJoined
        lost += other.lost; duplicated += other.duplicated; reordered += other.reordered
        rejectedButDelivered += other.rejectedButDelivered; lateDeliveries += other.lateDeliveries
        fdPipes += other.fdPipes; fdSocketpairs += other.fdSocketpairs; fdsOpened += other.fdsOpened; fdsClosed += other.fdsClosed
        fdWrites += other.fdWrites; fdWritesRefused += other.fdWritesRefused
        fdBytesWritten += other.fdBytesWritten; fdBytesDelivered += other.fdBytesDelivered
        fdCancelled += other.fdCancelled; fdCancelledWhileReady += other.fdCancelledWhileReady
        fdCancelledWhileHeld += other.fdCancelledWhileHeld; fdInFlightAtCancel += other.fdInFlightAtCancel
        fdRanAfterCancel += other.fdRanAfterCancel; fdWrongThread += other.fdWrongThread; fdLost += other.fdLost; fdNotPrefix += other.fdNotPrefix
        timersAdded += other.timersAdded; timersRepeating += other.timersRepeating; timersFired += other.timersFired
        timersRearmedInBlock += other.timersRearmedInBlock; timersRearmedFromOtherThreads += other.timersRearmedFromOtherThreads
        timersInvalidated += other.timersInvalidated; timersInvalidatedWhileFiring += other.timersInvalidatedWhileFiring
        timersInFlightAtInvalidate += other.timersInFlightAtInvalidate; timersFiredForOlderDate += other.timersFiredForOlderDate
        timersEarly += other.timersEarly; timersAfterInvalidate += other.timersAfterInvalidate; timersDoubleFire += other.timersDoubleFire
        timersRearmLost += other.timersRearmLost; timersNeverFired += other.timersNeverFired; timersWrongThread += other.timersWrongThread
        callouts += other.callouts
        for v in other.violations { violation("round \(rounds): \(v)") }
    }
}

enum System {
    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
