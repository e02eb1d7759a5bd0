import PortRunLoopKit
import PortRunLoopBus

/// A one-shot outcome a caller of the transport waits for, bounded in time: finished on the loop's
/// thread (a subscription confirmed, the first connection made or refused, a flush answered),
/// waited for by the thread that made it in the package's one blocking wait (`PendingResult`).
typealias LoopWaiter = PendingResult<Result<Void, BusNotificationError>>

extension RedisTransport {
    /// An outcome the calling thread will wait for. On the transport's own loop the wait runs the
    /// loop nested in ``RedisTransport/waitMode``, the private mode in which only the transport's
    /// sockets, timers and connection events run (notifications are not delivered meanwhile: they
    /// wait, in order, for the common modes); on another loop's thread it serves that loop's
    /// synchronous calls (W4); a thread without a loop sleeps.
    func makeWaiter() -> LoopWaiter {
        LoopWaiter(serving: loop.isCurrentThread ? Self.waitMode : .synchronousWait)
    }
}
