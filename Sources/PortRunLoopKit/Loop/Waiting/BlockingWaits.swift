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
/// thread), so the graph's one lock is off every hot path. A wait on no loop (a request answered by
/// another process) is not registered: it adds no edge, and as the innermost wait it would hide the
/// call it may be nested in, which still blocks the thread.
///
/// The graph lives in the loops themselves: each loop's stack of waits
/// (``PortRunLoop/blockingWaitStack``) and a mark for the search (``PortRunLoop/blockingWaitVisit``),
/// both guarded by this object's one lock. Registering a wait with no cycle behind it costs the
/// lock, one allocation (the ``BlockingWait``) and an append: no hashing, and no array or set
/// per search (a search marks the loops it visits with its epoch, and builds the cycle's path only
/// once it found one).
///
/// Thread-safety: `Sendable`; the loops' stacks and marks are guarded by `epoch`'s mutex; a
/// ``BlockingWait``'s `broken` flag is written under it and read with an atomic load.
final class BlockingWaits: Sendable {
    static let shared = BlockingWaits()

    /// Guards every loop's ``PortRunLoop/blockingWaitStack`` and ``PortRunLoop/blockingWaitVisit``;
    /// the value is the last search's epoch.
    private let epoch = TracedMutex<UInt64>(0)

    /// Registers that `waiter`'s thread is about to block on `targets`. Returns nil when the wait is
    /// a send that would close a cycle of waits no loop can leave (the send must fail at once).
    /// For a call that closes such a cycle, the sends in it are broken (and woken) instead.
    func enter(_ waiter: PortRunLoop, on targets: [PortRunLoop], isSend: Bool,
               wake: @escaping @Sendable () -> Void = {}) -> BlockingWait? {
        let wait = BlockingWait(waiter: waiter, targets: targets, isSend: isSend, wake: wake)
        let toWake: [BlockingWait]? = epoch.withLock { epoch in
            epoch &+= 1
            let cycle = Self.cycle(closedBy: wait, epoch: epoch)
            guard let cycle, cycle.contains(where: \.isSend) else {
                waiter.blockingWaitStack.append(wait)
                return []
            }
            if isSend { return nil }
            let sends = cycle.filter { $0.isSend && !$0.isBroken }
            for send in sends { send.brokenFlag.store(true, ordering: .releasing) }
            waiter.blockingWaitStack.append(wait)
            return sends
        }
        guard let toWake else { return nil }
        for send in toWake { send.wake() }
        return wait
    }

    /// Ends `wait` (the waiter's innermost).
    func leave(_ wait: BlockingWait) {
        epoch.withLock { _ in
            let waiter = wait.waiter
            // Usually the last one: found at once, removed without moving anything.
            if let index = waiter.blockingWaitStack.lastIndex(where: { $0 === wait }) {
                waiter.blockingWaitStack.remove(at: index)
            }
        }
    }

    /// The waits of a cycle `wait` would close (itself included, in no particular order), if any.
    /// Follows each loop's innermost wait from `wait`'s targets, depth first, visiting each loop
    /// once per search. Caller holds the lock.
    private static func cycle(closedBy wait: BlockingWait, epoch: UInt64) -> [BlockingWait]? {
        for target in wait.targets {
            if var path = search(from: target, to: wait.waiter, epoch: epoch) {
                path.append(wait)
                return path
            }
        }
        return nil
    }

    /// The innermost waits on a path from `loop` to `goal`, or nil. Caller holds the lock.
    private static func search(from loop: PortRunLoop, to goal: PortRunLoop, epoch: UInt64) -> [BlockingWait]? {
        if loop === goal { return [] }
        guard loop.blockingWaitVisit != epoch else { return nil }
        loop.blockingWaitVisit = epoch
        guard let innermost = loop.blockingWaitStack.last, !innermost.isBroken else { return nil }
        for next in innermost.targets {
            if var path = search(from: next, to: goal, epoch: epoch) {
                path.append(innermost)
                return path
            }
        }
        return nil
    }
}

/// One registered blocking wait (see ``BlockingWaits``). It holds its loops only while it is
/// registered (the waiter is blocked in it, the targets are what it waits on).
///
/// Thread-safety: `Sendable`; immutable but for the atomic `brokenFlag`.
final class BlockingWait: Sendable {
    let waiter: PortRunLoop
    let targets: [PortRunLoop]
    let isSend: Bool
    /// Wakes the waiting thread so that it sees `isBroken`.
    let wake: @Sendable () -> Void
    let brokenFlag = Atomic<Bool>(false)

    init(waiter: PortRunLoop, targets: [PortRunLoop], isSend: Bool, wake: @escaping @Sendable () -> Void) {
        self.waiter = waiter
        self.targets = targets
        self.isSend = isSend
        self.wake = wake
    }

    /// True once a call closed a cycle through this send: the send must give up (return false).
    var isBroken: Bool { brokenFlag.load(ordering: .acquiring) }
}
