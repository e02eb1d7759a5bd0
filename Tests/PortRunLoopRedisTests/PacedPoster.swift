import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import PortRunLoopTestSupport

/// A thread that posts numbered notifications (1, 2, …) through `post`, one every 2 ms, until
/// ``stop()`` or a post throws; and the number of the last post made before `center` reported its
/// first connection loss (one more may have been under way): what the failover tests compare
/// their losses with.
///
/// Thread-safety: `Sendable`; every member may be called from any thread.
final class PacedPoster: Sendable {
    private let posted = PortRunLoopTestSupport.Locked(0)
    private let stopped = PortRunLoopTestSupport.Locked(false)
    private let done = DispatchSemaphore(value: 0)
    private let atLoss = PortRunLoopTestSupport.Locked<Int?>(nil)
    private let lossObservation: BusObservation

    init(noticingLossOf center: BusNotificationCenter, on loop: PortRunLoop, _ post: @escaping @Sendable (Int) throws -> Void) {
        let posted = self.posted, atLoss = self.atLoss
        lossObservation = center.addDisconnectionObserver(on: loop) { _ in
            atLoss.withLock { if $0 == nil { $0 = posted.withLock { $0 } } }
        }
        let stopped = self.stopped, done = self.done
        Thread.detachNewThread {
            var n = 0
            while !stopped.withLock({ $0 }) {
                n += 1
                do { try post(n) } catch { break }
                posted.withLock { $0 = n }
                Thread.sleep(forTimeInterval: 0.002) // pacing: a post every 2 ms
            }
            done.signal()
        }
    }

    /// The number of the last post that returned.
    var last: Int { posted.withLock { $0 } }

    /// The last post made before the center reported its first loss; nil before any loss.
    var lastBeforeLoss: Int? { atLoss.withLock { $0 } }

    /// Stops posting and waits (at most 10 s) for the thread to end; false if it had not.
    func stop() -> Bool {
        stopped.withLock { $0 = true }
        return done.wait(timeout: .now() + 10) == .success
    }

    deinit { lossObservation.remove() }
}
