import Foundation
import PortRunLoopBus
import PortRunLoopKit

/// A one-shot outcome a caller waits for, bounded in time: finished on the loop's thread (a
/// subscription confirmed, the first connection made or refused), waited for on any thread.
///
/// On the loop's own thread the wait cannot block (the outcome needs the loop), so it runs the loop
/// nested in ``RedisTransport/waitMode``, the private mode in which only the transport's sockets,
/// timers and connection events run (notifications are not delivered meanwhile: they wait, in
/// order, for the common modes). On another thread it waits on a condition.
///
/// Thread-safety: `@unchecked Sendable`: `outcome` is guarded by `condition`.
final class LoopWaiter: @unchecked Sendable {
    private let condition = NSCondition()
    private var outcome: Result<Void, BusNotificationError>? // guarded by `condition`

    /// Sets the outcome (the first one set stays) and wakes the waiter.
    func finish(_ result: Result<Void, BusNotificationError>) {
        condition.lock()
        if outcome == nil {
            outcome = result
            condition.broadcast()
        }
        condition.unlock()
    }

    var result: Result<Void, BusNotificationError>? {
        condition.lock()
        defer { condition.unlock() }
        return outcome
    }

    /// Waits at most `timeout` for the outcome; nil when it did not come in time.
    func wait(on loop: PortRunLoop, timeout: Duration) -> Result<Void, BusNotificationError>? {
        let deadline = Date(timeIntervalSinceNow: timeout.seconds)
        if loop.isCurrentThread {
            while result == nil, Date() < deadline {
                // False: nothing is scheduled in the mode, so nothing can finish the wait.
                guard loop.run(mode: RedisTransport.waitMode, before: deadline) else { break }
            }
            return result
        }
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil {
            if !condition.wait(until: deadline) { break }
        }
        return outcome
    }
}
