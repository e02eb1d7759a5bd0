import BenchSupport
import NIOCore
import NIOPosix
import PeerSupport

/// SwiftNIO: the fd ping-pong on ONE `EventLoop` (a one-thread `MultiThreadedEventLoopGroup`). Each
/// end of the socketpair becomes a channel with `NIOPipeBootstrap.takingOwnershipOfDescriptor(
/// inputOutput:)`; a handler on each echoes every byte it reads (`writeAndFlush` of the buffer it
/// got), so one byte goes back and forth. A sample starts with `execute` writing the first byte.
///
/// Thread-safety: `Sendable`; driven by one thread (see ``FdPingPongPeer``); the state is touched
/// only on the event loop.
public final class NIOFdPingPong: FdPingPongPeer, @unchecked Sendable {
    /// Always 0: NIO runs without idle sources here.
    ///
    /// Thread-safety: a constant.
    public let idleSources = 0
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let loop: any EventLoop
    private let state = State()
    private var channels: [any Channel] = []

    /// The count shared by both handlers (event loop only, and the driver after ``done``).
    final class State: @unchecked Sendable {
        let done = Completion()
        var handled = 0
        var target = 0
        var deadline: UInt64 = 0

        /// Counts one event; false when the sample is over (write nothing back).
        func eventHandled() -> Bool {
            handled &+= 1
            if handled == target || (handled & 63 == 0 && ProcessCounters.nanoseconds() >= deadline) {
                done.signal()
                return false
            }
            return true
        }
    }

    /// Echoes each byte it reads while the sample goes on.
    final class ByteEchoHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let state: State
        init(state: State) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = Self.unwrapInboundIn(data)
            if state.eventHandled() { context.writeAndFlush(Self.wrapOutboundOut(buffer), promise: nil) }
        }
    }

    /// Makes the socketpair and its two channels on a new event loop.
    ///
    /// Thread-safety: any thread.
    public init() throws {
        loop = group.next()
        let pair = SocketPair()
        let state = self.state
        let bootstrap = NIOPipeBootstrap(group: loop).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ByteEchoHandler(state: state))
            }
        }
        do {
            channels.append(try bootstrap.takingOwnershipOfDescriptor(inputOutput: pair.first).wait())
            channels.append(try bootstrap.takingOwnershipOfDescriptor(inputOutput: pair.second).wait())
        } catch {
            shutDown()
            throw error
        }
    }

    /// Runs one sample on the peer's loop thread (see ``FdPingPongPeer/runSample(events:deadline:)``).
    ///
    /// Thread-safety: the driving thread; blocks until the sample ended.
    public func runSample(events: Int, deadline: UInt64) -> Int {
        let state = self.state, first = channels[0]
        loop.execute {
            state.handled = 0
            state.target = events
            state.deadline = deadline
            var byte = first.allocator.buffer(capacity: 1)
            byte.writeInteger(UInt8(1))
            first.writeAndFlush(byte, promise: nil)
        }
        state.done.wait()
        return state.handled
    }

    /// Frees everything and ends the thread (see ``FdPingPongPeer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once.
    public func shutDown() {
        for channel in channels { try? channel.close().wait() }
        channels = []
        try? group.syncShutdownGracefully()
    }
}
