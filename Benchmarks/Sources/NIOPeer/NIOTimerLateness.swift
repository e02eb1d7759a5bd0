import BenchSupport
import NIOCore
import NIOPosix

/// SwiftNIO: `scheduleTask(deadline:)` on ONE `EventLoop`, lateness measured against that
/// `NIODeadline`; the driver waits with a ``Completion``.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``TimerLatenessPeer``).
public final class NIOTimerLateness: TimerLatenessPeer, @unchecked Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let done = Completion()
    private var late: Int64 = 0 // written on the loop before `done` is signalled

    /// Starts the event loop thread.
    ///
    /// Thread-safety: any thread.
    public init() {}

    /// One timer (see ``TimerLatenessPeer/lateness(afterNanoseconds:)``).
    ///
    /// Thread-safety: the driving thread.
    public func lateness(afterNanoseconds delay: Int64) -> Int64 {
        let deadline = NIODeadline.now() + .nanoseconds(delay)
        group.next().scheduleTask(deadline: deadline) { [self] in
            late = (NIODeadline.now() - deadline).nanoseconds
            done.signal()
        }
        done.wait()
        return late
    }

    /// Ends the loop thread (see ``TimerLatenessPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() { try? group.syncShutdownGracefully() }
}
