import Foundation

/// What one producer did in a round, kept thread-local while it runs and handed to the verifier
/// after the producer joined.
///
/// Thread-safety: a value type, owned by one producer thread at a time.
struct StressProducerLog: Sendable {
    enum CallOutcome: Sendable, Equatable { case returned, rethrew, shutDown, timedOut, other(String) }

    /// Per port uid: accepted sequence numbers in send order (bit 31 = must arrive).
    var acceptedSends: [Int: [UInt32]] = [:]
    /// Per port uid: sequence numbers of sends that returned false.
    var rejectedSends: [Int: Set<UInt32>] = [:]
    /// Per consumer id: accepted `perform` sequence numbers in order (bit 31 = must run).
    var acceptedPerforms: [Int: [UInt32]] = [:]
    var rejectedPerforms = 0
    /// Per consumer id: (seq, outcome) of each `performAndWait`.
    var calls: [Int: [(UInt32, CallOutcome)]] = [:]
    /// Async calls made: `submit` and actor hops (their outcomes are in `calls` too).
    var submits = 0
    var actorHops = 0
    /// `performAndWait` that failed with loopShutDown although the consumer was not retiring.
    var shutDownWhileAlive: [String] = []
    var loopStops = 0, wakeUps = 0, invalidations = 0, exits = 0, relays = 0
    var sendsAccepted = 0, sendsRejected = 0, performsAccepted = 0
    var notificationsPosted = 0, observersAdded = 0, observersRemoved = 0
}
