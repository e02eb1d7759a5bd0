import Foundation

/// What a stress run did and what it found. ``violations`` empty means every check passed.
///
/// Thread-safety: a value type; `Sendable`.
public struct StressReport: Sendable, CustomStringConvertible {
    /// The configuration that ran (its seed replays the run's choices).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var configuration: StressConfiguration
    /// Rounds completed.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var rounds = 0
    /// Wall-clock seconds.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var elapsed: Double = 0

    /// Port sends that returned true / false.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var sendsAccepted = 0, sendsRejected = 0
    /// Accepted messages handed to a handler, and accepted messages discarded because their port was
    /// invalidated (or their loop shut down) first, as counted by the port's statistics.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var messagesDelivered = 0, messagesDiscarded = 0
    /// `perform` calls that returned true / false, and accepted blocks that ran.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var performsAccepted = 0, performsRejected = 0, performsRun = 0
    /// `performAndWait` outcomes: returned a value, rethrew the body's error, failed with
    /// `loopShutDown`, failed with `timedOut`.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var callsReturned = 0, callsRethrew = 0, callsShutDown = 0, callsTimedOut = 0
    /// Of the calls: async `submit`s and actor hops through a loop's executor.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var submits = 0, actorHops = 0
    /// Synchronous calls made from one consumer loop to another (loop threads waiting on each other).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var relayCallsSucceeded = 0, relayCallsFailed = 0
    /// Notification posts, deliveries, and observers added / removed.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var notificationsPosted = 0, notificationsDelivered = 0, observersAdded = 0, observersRemoved = 0
    /// Chaos: ports invalidated, loop stops (restarts), consumer threads retired (exited / stopped).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var portInvalidations = 0, loopStops = 0, consumerExits = 0
    /// Threads started / joined (producers and consumers).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var threadsStarted = 0, threadsJoined = 0

    /// Fd sources: pipes and socketpairs watched (socketpairs among them), fds opened and closed,
    /// producer writes (one record each) and writes refused (the pipe was sealed for cancellation,
    /// or full), bytes written (producers and cancellers) and bytes the handlers read.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var fdPipes = 0, fdSocketpairs = 0, fdsOpened = 0, fdsClosed = 0
    /// See ``fdPipes``.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var fdWrites = 0, fdWritesRefused = 0, fdBytesWritten = 0, fdBytesDelivered = 0
    /// Fd sources cancelled from another thread; of those, cancelled with bytes still unread (the
    /// fd ready), and cancelled while the handler was held (not reading: called on every turn).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var fdCancelled = 0, fdCancelledWhileReady = 0, fdCancelledWhileHeld = 0
    /// Handler calls that started after the marker was set but were excused as the one call in
    /// flight when `cancel()` returned (see `StressCancelMarker`).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var fdInFlightAtCancel = 0
    /// Fd violations: handler starts after `cancel()` returned, handler calls off the loop's
    /// thread, records written before the cancellation point and never read, and delivered byte
    /// streams that are not a prefix of the written one (duplicated, reordered, skipped or corrupt
    /// bytes).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var fdRanAfterCancel = 0, fdWrongThread = 0, fdLost = 0, fdNotPrefix = 0

    /// Timers added from producer and chaos threads (repeating ones among them), fires, re-arms by
    /// setting `fireDate` from the timer's own block and from other threads.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var timersAdded = 0, timersRepeating = 0, timersFired = 0, timersRearmedInBlock = 0, timersRearmedFromOtherThreads = 0
    /// Timers invalidated from other threads; of those, repeating timers invalidated while firing
    /// (they fired during the canceller's wait and were still valid); fires excused as the one call
    /// in flight when `invalidate()` returned.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var timersInvalidated = 0, timersInvalidatedWhileFiring = 0, timersInFlightAtInvalidate = 0
    /// One-shot fires for an older date that started after a re-arm from another thread had
    /// returned (allowed: such a re-arm applies from the loop's next turn, and the timer must then
    /// fire again at the new date); they show the re-arm race is being exercised.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var timersFiredForOlderDate = 0
    /// Timer violations: fires before the fire date they were armed for, fires after
    /// `invalidate()` returned, one-shot fires no arming accounts for (twice for one arming),
    /// re-arms that were dropped (the timer fired after the re-arm for an earlier date and never
    /// again), armed one-shots that never fired, fires off the loop's thread.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var timersEarly = 0, timersAfterInvalidate = 0, timersDoubleFire = 0, timersRearmLost = 0, timersNeverFired = 0, timersWrongThread = 0

    /// Run-loop observers and custom sources (with ``StressConfiguration/observersAndSources``).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var callouts = StressCalloutCounts()

    /// Accepted items that had to be delivered (or run) and were not.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var lost = 0
    /// Items delivered (or run) more than once.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var duplicated = 0
    /// Items delivered out of their producer's order.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var reordered = 0
    /// Items delivered although their send returned false.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var rejectedButDelivered = 0
    /// Handler calls that started after the port's `invalidate()` or the observer's removal returned.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var lateDeliveries = 0
    /// Every broken guarantee, described (the first 100).
    /// Thread-safety: a field of a value type (`Sendable`).
    public var violations: [String] = []

    /// True when no check failed.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var passed: Bool { violations.isEmpty }

    /// Thread-safety: a value type.
    public init(configuration: StressConfiguration) { self.configuration = configuration }

    mutating func violation(_ text: String) {
        if violations.count < 100 { violations.append(text) }
    }

    /// Adds `count` to `field` and, when it is not zero, records the violation `text` describes.
    mutating func countViolations(_ count: Int, in field: WritableKeyPath<StressReport, Int>,
                                  _ text: @autoclosure () -> String) {
        guard count > 0 else { return }
        self[keyPath: field] += count
        violation(text())
    }

    /// A multi-line summary: the configuration (seed first), the counts, and the verdict.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        var lines: [String] = []
        lines.append("portrunloop-stress \(configuration)")
        lines.append(String(format: "rounds=%d elapsed=%.1fs threads started=%d joined=%d", rounds, elapsed, threadsStarted, threadsJoined))
        lines.append("sends: accepted=\(sendsAccepted) rejected=\(sendsRejected) delivered=\(messagesDelivered) discarded(invalidated/shut down)=\(messagesDiscarded)")
        lines.append("performs: accepted=\(performsAccepted) rejected=\(performsRejected) ran=\(performsRun)")
        lines.append("async (counted in the calls below): submit=\(submits) actor hops=\(actorHops)")
        lines.append("performAndWait: returned=\(callsReturned) rethrew=\(callsRethrew) loopShutDown=\(callsShutDown) timedOut=\(callsTimedOut); loop-to-loop calls ok=\(relayCallsSucceeded) failed=\(relayCallsFailed)")
        lines.append("notifications: posted=\(notificationsPosted) delivered=\(notificationsDelivered) observers added=\(observersAdded) removed=\(observersRemoved)")
        lines.append("chaos: port invalidations=\(portInvalidations) loop stops=\(loopStops) consumer exits=\(consumerExits)")
        if configuration.fileDescriptors {
            lines.append("fd: pipes=\(fdPipes) (socketpairs=\(fdSocketpairs)) fds opened=\(fdsOpened) closed=\(fdsClosed) "
                + "writes=\(fdWrites) refused(sealed/full)=\(fdWritesRefused) bytes written=\(fdBytesWritten) delivered=\(fdBytesDelivered)")
            lines.append("fd: cancelled=\(fdCancelled) cancelled-while-ready=\(fdCancelledWhileReady) held=\(fdCancelledWhileHeld) "
                + "in-flight-at-cancel=\(fdInFlightAtCancel) ran-after-cancel=\(fdRanAfterCancel) wrong-thread=\(fdWrongThread) "
                + "lost=\(fdLost) not-prefix=\(fdNotPrefix)")
        }
        if configuration.timers {
            lines.append("timers: added=\(timersAdded) (repeating=\(timersRepeating)) fired=\(timersFired) "
                + "re-armed in block=\(timersRearmedInBlock) from other threads=\(timersRearmedFromOtherThreads) "
                + "invalidated=\(timersInvalidated) (while firing=\(timersInvalidatedWhileFiring)) in-flight-at-invalidate=\(timersInFlightAtInvalidate) "
                + "fired-for-older-date=\(timersFiredForOlderDate)")
            lines.append("timers: early=\(timersEarly) after-invalidate=\(timersAfterInvalidate) double-fire=\(timersDoubleFire) "
                + "rearm-lost=\(timersRearmLost) never-fired=\(timersNeverFired) wrong-thread=\(timersWrongThread)")
        }
        if configuration.observersAndSources { lines.append(contentsOf: callouts.lines) }
        lines.append("lost=\(lost) duplicated=\(duplicated) reordered=\(reordered) rejected-but-delivered=\(rejectedButDelivered) late=\(lateDeliveries)")
        if passed {
            lines.append("RESULT: PASS (seed \(configuration.seed))")
        } else {
            lines.append("RESULT: FAIL — \(violations.count) violation(s); replay with --seed \(configuration.seed) (PORTRUNLOOP_STRESS_SEED=\(configuration.seed))")
            lines.append(contentsOf: violations.map { "  - \($0)" })
        }
        return lines.joined(separator: "\n")
    }
}
