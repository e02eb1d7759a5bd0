import CBenchNative

/// The epoll floor of the fd ping-pong: a bare `epoll_wait` loop written in C
/// (`Sources/CBenchNative/cbench_epoll_ping_pong.c`), on a ``SampleThread``. No idle load.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``FdPingPongPeer``).
public final class EpollFdPingPong: FdPingPongPeer, @unchecked Sendable {
    /// Always 0: the floor runs without idle sources.
    ///
    /// Thread-safety: a constant.
    public let idleSources = 0
    private let thread = SampleThread()
    private var pingPong: OpaquePointer? // sample thread only

    /// Makes the socketpair and the epoll instance on a new thread.
    ///
    /// Thread-safety: any thread.
    public init() {
        thread.run {
            pingPong = cbench_epoll_ping_pong_create()
            precondition(pingPong != nil, "cbench_epoll_ping_pong_create failed")
        }
    }

    /// Runs one sample on the peer's loop thread (see ``FdPingPongPeer/runSample(events:deadline:)``).
    ///
    /// Thread-safety: the driving thread; blocks until the sample ended.
    public func runSample(events: Int, deadline: UInt64) -> Int {
        thread.run {
            let handled = cbench_epoll_ping_pong_run(pingPong, events, Int64(deadline))
            precondition(handled >= 0, "cbench_epoll_ping_pong_run failed")
            return handled
        }
    }

    /// Frees everything and ends the thread (see ``FdPingPongPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() {
        thread.run { cbench_epoll_ping_pong_destroy(pingPong) }
        thread.stop()
    }
}
