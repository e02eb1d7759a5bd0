#if canImport(Glibc)
import Glibc
#endif
import BenchSupport
import NIOCore
import NIOPosix
import PeerSupport

/// SwiftNIO: the echo server, `ServerBootstrap` on a `MultiThreadedEventLoopGroup` of one thread
/// (or `threads`: the server channel on one, accepted channels spread over all), bound to an
/// ephemeral port of 127.0.0.1, TCP_NODELAY on accepted connections; each connection's handler
/// writes back what it reads and flushes at the end of each read burst.
///
/// Thread-safety: `Sendable`; ``shutDown()`` from the driving thread.
public final class NIOEchoServer: EchoServer, @unchecked Sendable {
    /// The listening port on 127.0.0.1.
    ///
    /// Thread-safety: immutable.
    public let port: Int
    /// The event loops' CPU-time clocks.
    ///
    /// Thread-safety: immutable.
    public let serverThreadClocks: [clockid_t]
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    /// Writes back every read; flushes once per read burst.
    final class EchoHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.write(data, promise: nil)
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            context.flush()
        }
    }

    /// Binds and starts accepting.
    ///
    /// Thread-safety: any thread.
    public init(threads: Int = 1) throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 4096)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(EchoHandler())
                }
            }
        do {
            serverThreadClocks = try group.makeIterator().map { loop in
                try loop.submit { ProcessCounters.currentThreadCPUClock() }.wait()
            }
            channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        port = channel.localAddress?.port ?? 0
    }

    /// Closes the listener and every connection and ends the loop thread (see ``EchoServer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once, after the clients closed.
    public func shutDown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}
