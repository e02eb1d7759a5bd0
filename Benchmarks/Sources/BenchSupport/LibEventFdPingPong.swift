import CBenchNative

/// The libevent floor of the fd ping-pong: a bare `event_base` with two persistent `EV_READ`
/// events, written in C (`Sources/CBenchNative/cbench_libevent_ping_pong.c`), on a
/// ``SampleThread``; idle fds as more persistent `EV_READ` events, idle timers as `evtimer`s an
/// hour away.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``FdPingPongPeer``).
public final class LibEventFdPingPong: FdPingPongPeer, @unchecked Sendable {
    /// Idle events registered (fds or timers).
    ///
    /// Thread-safety: immutable after init.
    public private(set) var idleSources = 0
    private let thread = SampleThread()
    private var pingPong: OpaquePointer? // sample thread only
    private let idleDescriptors: IdleDescriptors?

    /// Makes the base and the events on a new thread.
    ///
    /// Thread-safety: any thread.
    public init(idle: IdleLoad) {
        if case .fileDescriptors(let count) = idle {
            idleDescriptors = IdleDescriptors(requested: count)
        } else {
            idleDescriptors = nil
        }
        thread.run {
            pingPong = cbench_libevent_ping_pong_create()
            precondition(pingPong != nil, "cbench_libevent_ping_pong_create failed")
            if let idleDescriptors {
                idleSources = idleDescriptors.descriptors.withUnsafeBufferPointer {
                    cbench_libevent_ping_pong_add_idle_fds(pingPong, $0.baseAddress, $0.count)
                }
            }
            if case .timers(let count) = idle {
                idleSources = cbench_libevent_ping_pong_add_idle_timers(pingPong, count, 3600)
            }
        }
    }

    /// Runs one sample on the peer's loop thread (see ``FdPingPongPeer/runSample(events:deadline:)``).
    ///
    /// Thread-safety: the driving thread; blocks until the sample ended.
    public func runSample(events: Int, deadline: UInt64) -> Int {
        thread.run {
            let handled = cbench_libevent_ping_pong_run(pingPong, events, Int64(deadline))
            precondition(handled >= 0, "cbench_libevent_ping_pong_run failed")
            return handled
        }
    }

    /// Frees everything and ends the thread (see ``FdPingPongPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() {
        thread.run { cbench_libevent_ping_pong_destroy(pingPong) }
        thread.stop()
        idleDescriptors?.close()
    }
}
