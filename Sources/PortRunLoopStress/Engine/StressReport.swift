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
    /// Of the calls: async `submit`s and actor hops through a loop's executor (issue 4).
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
