/// A wait for shared state to change (a port's room, a connection's reader, a gate's handlers):
/// the state lists one per waiter (``StateChangeWaits``) and completes them all when it changes;
/// nothing is withdrawn at the deadline, which only ends the wait.
///
/// Thread-safety: `@unchecked Sendable`: only ``BlockingCall``'s own atomic state.
final class StateChangeWait: BlockingCall, @unchecked Sendable {
    override func deadlinePassed() { complete() }
}

/// The ``StateChangeWait``s listed on a piece of shared state: a waiter adds its wait with the
/// state's lock held, lets the lock go and waits; whoever changes the state completes them all
/// (``completeAll()``), and each waiter looks again and, if it must go on waiting, adds a new one.
/// Nil storage while none is listed, so the check a hot path makes ("does anyone wait?") reads only
/// the owner's own memory, not an array's header elsewhere.
///
/// Thread-safety: not thread-safe; guarded by its owner's lock. Lock order: the owner's lock, then
/// the parking-lot slot (a waiter never takes the owner's lock while it sleeps).
struct StateChangeWaits {
    private var waits: [StateChangeWait]?

    /// Whether no wait is listed.
    var isEmpty: Bool { waits == nil }

    /// Lists `wait`.
    mutating func add(_ wait: StateChangeWait) {
        if waits == nil { waits = [wait] } else { waits!.append(wait) }
    }

    /// Unlists `wait` if it is still listed (its deadline passed, or the wait-for graph broke it).
    mutating func remove(_ wait: StateChangeWait) {
        guard waits != nil else { return }
        waits!.removeAll { $0 === wait }
        if waits!.isEmpty { waits = nil }
    }

    /// Completes and unlists every listed wait.
    mutating func completeAll() {
        guard let listed = waits else { return }
        waits = nil
        for wait in listed { wait.complete() }
    }
}
