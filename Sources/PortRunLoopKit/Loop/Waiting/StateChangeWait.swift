/// A wait for shared state to change (a port's room, a gate's handlers): the state lists one per
/// waiter and completes them all when it changes; nothing is withdrawn at the deadline, which only
/// ends the wait.
///
/// Thread-safety: `@unchecked Sendable`: only ``BlockingCall``'s own atomic state.
final class StateChangeWait: BlockingCall, @unchecked Sendable {
    override func deadlinePassed() { complete() }
}
