import Synchronization

/// Which loop threads are blocked waiting on which other loops, to refuse the waits that could never
/// end: the wait-for graph of the library's blocking calls.
///
/// Two kinds of wait block a loop's thread on other loops:
/// - a ``MessagePort`` send waiting for room in a port scheduled on another loop (room is made only
///   when that loop delivers the port's messages), and
/// - a `performAndWait` or `postAndWait` made on a loop thread, waiting for other loops to run its
///   call or deliveries. While it waits, the thread serves synchronous calls addressed to it
///   (``PortRunLoop/performAndWait(timeout:_:)`` W4), but it delivers no port messages.
///
/// A cycle made only of calls resolves by itself (each waiter serves the others' calls). A cycle with
/// at least one send in it never does: the port's loop is blocked itself, on something that waits for
/// the sender. Such a cycle is found when its last wait is registered, and broken at its sends: the
/// send that would close it returns false at once, and a call or post that closes it makes the sends
/// already blocked in it return false (their loops then go on and serve the call). The self-send rule
/// (a full port's own loop sending to it fails fast) is the one-loop case of the same rule.
///
/// Only the innermost wait of a thread counts (the one it is blocked in now); waits are registered
/// only on loop threads, and only on slow paths (a full port, a synchronous call from a loop
/// thread), so the graph's one lock is off every hot path.
///
/// Thread-safety: `Sendable`; the waits are guarded by their mutex; a ``BlockingWait``'s `broken`
/// flag is written under it and read with an atomic load.
final class BlockingWaits: Sendable {
    static let shared = BlockingWaits()

    /// The waits in progress on each loop's thread, innermost last.
    private let waits = TracedMutex<[ObjectIdentifier: [BlockingWait]]>([:])

    /// Registers that `waiter`'s thread is about to block on `targets`. Returns nil when the wait is
    /// a send that would close a cycle of waits no loop can leave (the send must fail at once).
    /// For a call that closes such a cycle, the sends in it are broken (and woken) instead.
    func enter(_ waiter: PortRunLoop, on targets: [PortRunLoop], isSend: Bool,
               wake: @escaping @Sendable () -> Void = {}) -> BlockingWait? {
        let wait = BlockingWait(waiter: ObjectIdentifier(waiter), targets: targets.map(ObjectIdentifier.init),
                                isSend: isSend, wake: wake)
        let toWake: [BlockingWait]? = waits.withLock { waits in
            let cycle = Self.cycle(closedBy: wait, in: waits)
            guard let cycle, cycle.contains(where: \.isSend) else {
                waits[wait.waiter, default: []].append(wait)
                return []
            }
            if isSend { return nil }
            let sends = cycle.filter { $0.isSend && !$0.isBroken }
            for send in sends { send.brokenFlag.store(true, ordering: .releasing) }
            waits[wait.waiter, default: []].append(wait)
            return sends
        }
        guard let toWake else { return nil }
        for send in toWake { send.wake() }
        return wait
    }

    /// Ends `wait` (the waiter's innermost).
    func leave(_ wait: BlockingWait) {
        waits.withLock { waits in
            guard var stack = waits[wait.waiter] else { return }
            if let index = stack.lastIndex(where: { $0 === wait }) { stack.remove(at: index) }
            waits[wait.waiter] = stack.isEmpty ? nil : stack
        }
    }

    /// The waits of a cycle `wait` would close in `waits` (itself included), if any. Follows each
    /// loop's innermost wait from `wait`'s targets, depth first.
    private static func cycle(closedBy wait: BlockingWait, in waits: [ObjectIdentifier: [BlockingWait]]) -> [BlockingWait]? {
        var visited: Set<ObjectIdentifier> = []
        func search(_ loop: ObjectIdentifier, path: [BlockingWait]) -> [BlockingWait]? {
            if loop == wait.waiter { return path }
            guard visited.insert(loop).inserted, let innermost = waits[loop]?.last, !innermost.isBroken else { return nil }
            for next in innermost.targets {
                if let found = search(next, path: path + [innermost]) { return found }
            }
            return nil
        }
        for target in wait.targets {
            if let found = search(target, path: [wait]) { return found }
        }
        return nil
    }
}

/// One registered blocking wait (see ``BlockingWaits``).
///
/// Thread-safety: `Sendable`; immutable but for the atomic `brokenFlag`.
final class BlockingWait: Sendable {
    let waiter: ObjectIdentifier
    let targets: [ObjectIdentifier]
    let isSend: Bool
    /// Wakes the waiting thread so that it sees `isBroken`.
    let wake: @Sendable () -> Void
    let brokenFlag = Atomic<Bool>(false)

    init(waiter: ObjectIdentifier, targets: [ObjectIdentifier], isSend: Bool, wake: @escaping @Sendable () -> Void) {
        self.waiter = waiter
        self.targets = targets
        self.isSend = isSend
        self.wake = wake
    }

    /// True once a call closed a cycle through this send: the send must give up (return false).
    var isBroken: Bool { brokenFlag.load(ordering: .acquiring) }
}
