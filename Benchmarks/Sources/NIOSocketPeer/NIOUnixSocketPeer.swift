import NIOCore
import NIOPosix
import PeerSupport

/// SwiftNIO over a Unix-domain stream socket, the cross-process exchange of `cbench_seqpacket.h`
/// framed with a 4-byte big-endian length (a stream has no message boundaries). The server half
/// runs in `CrossProcessBenchPeer serve nio PATH`, the client half in the benchmark or a sender process.
enum NIOUnixFraming {
    static func frame(kind: UInt8, size: Int) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: 4 + size)
        buffer.writeInteger(UInt32(size))
        buffer.writeInteger(kind)
        buffer.writeRepeatingByte(UInt8(ascii: "x"), count: size - 1)
        return buffer
    }

    /// Splits the stream into frames (the payload without its length).
    final class Decoder: ByteToMessageDecoder {
        typealias InboundOut = ByteBuffer

        func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
            guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self),
                  buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
            buffer.moveReaderIndex(forwardBy: 4)
            context.fireChannelRead(wrapInboundOut(buffer.readSlice(length: Int(length))!))
            return .continue
        }
    }
}

/// The NIO server: `ServerBootstrap` on a one-thread group, bound to a Unix socket path; answers echo
/// and flush frames, flushing once per read burst.
///
/// Thread-safety: `Sendable`; ``close()`` once.
public final class NIOUnixSocketServer: @unchecked Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: any Channel

    final class Answerer: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            switch frame.getInteger(at: frame.readerIndex, as: UInt8.self) {
            case UInt8(ascii: "E"):
                var answer = context.channel.allocator.buffer(capacity: 4 + frame.readableBytes)
                answer.writeInteger(UInt32(frame.readableBytes))
                answer.writeImmutableBuffer(frame)
                context.write(wrapOutboundOut(answer), promise: nil)
            case UInt8(ascii: "F"):
                context.write(wrapOutboundOut(NIOUnixFraming.frame(kind: UInt8(ascii: "F"), size: 1)), promise: nil)
            default:
                break
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) { context.flush() }
    }

    /// Binds `path` (an existing socket file there is removed) and starts accepting.
    ///
    /// Thread-safety: any thread.
    public init(path: String) throws {
        let bootstrap = ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(NIOUnixFraming.Decoder()), Answerer())
                }
            }
        do {
            channel = try bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
    }

    /// Blocks until the listener closes (the peer process serves until it is killed).
    ///
    /// Thread-safety: any thread except the group's.
    public func wait() { try? channel.closeFuture.wait() }
}

/// The NIO client: one connection on a one-thread group; each echo or flush is answered by one
/// frame, matched to the waiting promises in order.
///
/// Thread-safety: one driving thread (see ``CrossProcessClient``).
public final class NIOUnixSocketClient: CrossProcessClient, @unchecked Sendable {
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: any Channel
    private let answers = Answers()

    /// The promises waiting for an answer, and the state of a ping-pong driven on the event loop.
    /// Thread-safety: the channel's event loop only.
    final class Answers: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        var waiting = CircularBuffer<EventLoopPromise<Void>>()
        var pingPong: (frame: ByteBuffer, count: Int, index: Int, started: UInt64,
                       latencies: UnsafeMutablePointer<Int64>?, done: EventLoopPromise<Void>)?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if var game = pingPong {
                let now = ProcessCounters.nanoseconds()
                game.latencies?[game.index] = Int64(now - game.started)
                game.index += 1
                if game.index == game.count {
                    pingPong = nil
                    game.done.succeed()
                } else {
                    game.started = now
                    pingPong = game
                    context.writeAndFlush(NIOAny(game.frame), promise: nil)
                }
            } else if !waiting.isEmpty {
                waiting.removeFirst().succeed()
            }
        }
    }

    /// Connects to the NIO server at `path`.
    ///
    /// Thread-safety: any thread.
    public init(path: String) throws {
        let answers = answers
        let bootstrap = ClientBootstrap(group: group).channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandlers(ByteToMessageHandler(NIOUnixFraming.Decoder()), answers)
            }
        }
        do {
            channel = try bootstrap.connect(unixDomainSocketPath: path).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
    }

    /// The round trips run on the event loop, as a NIO program would drive them: each answer sends
    /// the next echo; the driving thread waits once for the last.
    ///
    /// Thread-safety: the driving thread.
    public func roundTrips(_ count: Int, size: Int, latencies: UnsafeMutablePointer<Int64>?) throws {
        let frame = NIOUnixFraming.frame(kind: UInt8(ascii: "E"), size: size)
        let channel = channel, answers = answers
        nonisolated(unsafe) let latencies = latencies
        try channel.eventLoop.flatSubmit {
            let done = channel.eventLoop.makePromise(of: Void.self)
            answers.pingPong = (frame, count, 0, ProcessCounters.nanoseconds(), latencies, done)
            channel.writeAndFlush(frame, promise: nil)
            return done.futureResult
        }.wait()
    }

    /// Thread-safety: the driving thread.
    public func burst(_ count: Int, size: Int) throws {
        let sink = NIOUnixFraming.frame(kind: UInt8(ascii: "S"), size: size)
        let flush = NIOUnixFraming.frame(kind: UInt8(ascii: "F"), size: 1)
        let channel = channel, answers = answers
        try channel.eventLoop.flatSubmit {
            for i in 0..<count {
                channel.write(sink, promise: nil)
                if i & 63 == 63 { channel.flush() }
            }
            let promise = channel.eventLoop.makePromise(of: Void.self)
            answers.waiting.append(promise)
            channel.writeAndFlush(flush, promise: nil)
            return promise.futureResult
        }.wait()
    }

    /// Thread-safety: the driving thread, once.
    public func close() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

extension CrossProcessTransport {
    /// SwiftNIO on both sides of a Unix-domain stream socket.
    ///
    /// Thread-safety: a constant.
    public static let nio = CrossProcessTransport(name: "NIO", peerArgument: "nio") { try NIOUnixSocketClient(path: $0) }
}
