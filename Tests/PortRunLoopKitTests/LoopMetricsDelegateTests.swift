import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `PortRunLoop.metricsDelegate`: one report per turn, on the loop's thread, with exact counts.
@Suite(.timeLimit(.minutes(1))) struct LoopMetricsDelegateTests {
    /// The wait after a turn is computed after its report: a timer the delegate schedules there
    /// wakes the loop at its date, with nothing else to wake it.
    @Test func aTimerScheduledByTheDelegateWakesTheLoop() throws {
        let (result, elapsed) = try onFreshThread { () -> (RunLoopRunResult, Double) in
            let loop = PortRunLoop.current
            let keepAlive = MessagePort()
            loop.add(keepAlive, forMode: .default)
            defer { keepAlive.invalidate() }
            let delegate = TimerSchedulingDelegate()
            loop.metricsDelegate = delegate
            let start = Date()
            // A wait that missed the timer would last until the deadline (20 s).
            let result = loop.run(mode: .default, timeout: 20, returnAfterSourceHandled: true)
            loop.metricsDelegate = nil
            return (result, Date().timeIntervalSince(start))
        }
        #expect(result == .stopped)
        #expect(elapsed < 10, "the loop slept through the delegate's timer until its run's deadline (\(elapsed) s)")
    }

    @Test func aScriptedTurnIsReportedWithExactCounts() throws {
        let (reported, delta, offThreadCalls) = try onFreshThread { () throws -> ([LoopTurnInfo], LoopMetrics, Int) in
            let loop = PortRunLoop.current
            let turns = TurnRecorder(loop: loop)
            loop.metricsDelegate = turns
            let port = MessagePort(queueLimit: 8)
            port.setHandler { _ in }
            loop.add(port, forMode: .default)
            let pipe = Pipe2()
            let source = try loop.watch(fileDescriptor: pipe.readEnd, for: .read) { _ in
                _ = pipe.readByte()
                loop.stop()
            }
            defer { source.cancel(); port.invalidate() }
            let before = loop.metrics
            loop.perform {
                // This turn: this block, and the timer (due, scheduled before the turn's timers).
                loop.add(RunLoopTimer(fireAt: .distantPast) { _ in }, forMode: .default)
                // The next turn: three blocks and two messages, all queued now.
                for _ in 0..<3 { loop.perform {} }
                port.send(before: .distantFuture)
                port.send(before: .distantFuture, components: [Data([1])])
                // A later turn: the fd, once libevent has seen it readable.
                pipe.write(1)
            }
            loop.run()
            return (turns.infos, loop.metrics.since(before), turns.offThreadCalls)
        }
        let script = try #require(reported.firstIndex { $0.blocksRun == 1 && $0.timersFired == 1 })
        #expect(reported[script].messagesDelivered == 0)
        #expect(reported[script].fdEventsHandled == 0)
        #expect(reported[script].executorJobsRun == 0)
        try #require(reported.count > script + 1)
        let next = reported[script + 1]
        #expect(next.blocksRun == 3)
        #expect(next.messagesDelivered == 2)
        #expect(next.timersFired == 0)
        #expect(next.fdEventsHandled == 0)
        #expect(next.executorJobsRun == 0)
        var fdTurns: [LoopTurnInfo] = []
        for info in reported where info.fdEventsHandled > 0 { fdTurns.append(info) }
        #expect(fdTurns.count == 1)
        #expect(fdTurns.first?.fdEventsHandled == 1)
        #expect(fdTurns.first?.itemsHandled == 1)
        // Every turn is of the default mode, at level 0, well-formed, and together they account
        // for exactly what the loop's counters saw.
        var sum = LoopMetrics()
        for info in reported {
            #expect(info.mode == .default)
            #expect(info.nestingLevel == 0)
            #expect(info.startTime <= info.endTime)
            #expect(info.sleepTime >= .zero)
            sum.performsRun += info.blocksRun + info.executorJobsRun
            sum.messagesDelivered += info.messagesDelivered
            sum.timersFired += info.timersFired
            sum.fdEventsHandled += info.fdEventsHandled
        }
        #expect(sum.performsRun == delta.performsRun)
        #expect(sum.messagesDelivered == delta.messagesDelivered)
        #expect(sum.timersFired == delta.timersFired)
        #expect(sum.fdEventsHandled == delta.fdEventsHandled)
        #expect(offThreadCalls == 0)
    }

    @Test func nestedTurnsAreReportedFirstAndCountedInTheEnclosingTurn() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let turns = TurnRecorder(loop: loop)
            loop.metricsDelegate = turns
            let nestedRan = Locked(false)
            loop.perform {
                loop.perform { nestedRan.withLock { $0 = true } }
                while !nestedRan.withLock({ $0 }) { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
            }
            while !nestedRan.withLock({ $0 }) || turns.infos.isEmpty {
                loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5))
            }
            let reported = turns.infos
            let nested = try #require(reported.firstIndex { $0.nestingLevel == 1 && $0.blocksRun == 1 })
            let outer = try #require(reported.firstIndex { $0.nestingLevel == 0 && $0.blocksRun == 2 })
            #expect(nested < outer)
            #expect(reported.filter { $0.nestingLevel == 0 }.map(\.blocksRun).reduce(0, +) == 2)
        }
    }

    @Test func aDelegateSetFromAnotherThreadIsCalledOnTheLoopsThread() throws {
        let thread = try RunLoopThread(name: "turn-delegate")
        defer { thread.stop() }
        let turns = TurnRecorder(loop: thread.loop)
        thread.loop.metricsDelegate = turns
        #expect(thread.loop.metricsDelegate === turns)
        try thread.loop.performAndWait {}
        #expect(turns.sawBlock.wait())
        #expect(turns.offThreadCalls == 0)
        // Removed on the loop's thread: no turn is reported from then on, that one included.
        try thread.loop.performAndWait { thread.loop.metricsDelegate = nil }
        let count = turns.infos.count
        for _ in 0..<3 { try thread.loop.performAndWait {} }
        #expect(turns.infos.count == count)
        #expect(thread.loop.metricsDelegate == nil)
    }

    @Test func theWaitOfATurnIsItsSleepTime() throws {
        let thread = try RunLoopThread(name: "turn-sleep")
        defer { thread.stop() }
        let turns = TurnRecorder(loop: thread.loop)
        try thread.loop.performAndWait { thread.loop.metricsDelegate = turns }
        // The loop goes to sleep with nothing to do; a timer 20 ms away ends that turn's wait.
        let fired = Signal()
        thread.loop.add(RunLoopTimer(after: 0.02) { _ in fired.fire() }, forMode: .default)
        #expect(fired.wait())
        try thread.loop.performAndWait {}
        let slept = turns.infos.map(\.sleepTime).max() ?? .zero
        #expect(slept >= .milliseconds(5), "the turn after a wait for a 20 ms timer reports the wait")
        // The turn that fired the timer is the one after the wait.
        #expect(turns.infos.contains { $0.timersFired == 1 && $0.sleepTime >= .milliseconds(5) })
    }
}

/// Records every turn, and whether it was called anywhere but on the loop's thread.
/// A delegate that schedules a timer from its first report, as a delegate may (it runs on the loop's
/// thread).
final class TimerSchedulingDelegate: LoopMetricsDelegate, Sendable {
    let fired = Signal()
    private let scheduled = Locked(false)

    func processedTurn(of loop: PortRunLoop, info: LoopTurnInfo) {
        let first = scheduled.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        // The timer stops the run: a fired timer is not a handled source (Semantics R3), so the
        // run would otherwise go on to its deadline whether or not its wait missed the timer.
        loop.add(RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 0.01)) { [fired] _ in
            fired.fire()
            loop.stop()
        }, forMode: .default)
    }
}

final class TurnRecorder: LoopMetricsDelegate, Sendable {
    private let loop: PortRunLoop
    private let recorded = Locked<[LoopTurnInfo]>([])
    private let offThread = Locked(0)
    let sawBlock = Signal()

    init(loop: PortRunLoop) { self.loop = loop }

    func processedTurn(of loop: PortRunLoop, info: LoopTurnInfo) {
        if loop !== self.loop || !loop.isCurrentThread { offThread.withLock { $0 += 1 } }
        recorded.withLock { $0.append(info) }
        if info.blocksRun > 0 { sawBlock.fire() }
    }

    var infos: [LoopTurnInfo] { recorded.withLock { $0 } }
    var offThreadCalls: Int { offThread.withLock { $0 } }
}
