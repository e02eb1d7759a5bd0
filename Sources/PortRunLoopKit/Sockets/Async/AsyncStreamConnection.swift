import Foundation

/// A ``StreamConnection`` for async code: its input as an `AsyncSequence` of byte chunks
/// (``inbound``), and writes, shutdown and close that suspend the calling task instead of
/// calling back. The connection itself stays on its loop's thread, which does all its I/O; tasks
/// reach it through the loop.
///
/// ```swift
/// let connection = try await AsyncStreamConnection.connect(to: .host("127.0.0.1", port: 7777), on: io.loop)
/// try await connection.write(Array("hello\n".utf8))
/// for try await chunk in connection.inbound {
///     handle(chunk)
/// }
/// await connection.close()
/// ```
///
/// Make one with ``connect(to:on:timeout:options:inModes:inboundBufferLimit:)``, wrap an accepted
/// connection with ``init(wrapping:inboundBufferLimit:)`` on its loop's thread, or iterate a
/// listener's ``IncomingStreamConnections``.
///
/// **Back-pressure, both ways.** Input that the consumer has not taken yet is buffered up to
/// ``inboundBufferLimit`` bytes; past it, the connection pauses reading
/// (``StreamConnection/pauseReading()``) so the peer's writes stall in the kernel, and it reads
/// again once the consumer drained the buffer to half the limit. A ``write(_:)`` queues its bytes
/// and returns once the outbound queue is below its high-water mark; while it is above, the writer
/// stays suspended until the queue drains to the low-water mark
/// (``StreamConnectionEvent/writabilityChanged(_:)``), so a writer cannot outrun a slow reader.
///
/// **Cancellation closes the connection.** Cancelling a task suspended in ``write(_:)``,
/// ``shutdownOutput()`` or ``close()``, or waiting for input in ``inbound``, closes the connection
/// at once (queued bytes are dropped; the peer sees the connection end) and that call ends:
/// ``StreamConnectionError/cancelled`` for a write or a shutdown, nil for the sequence. A task
/// already cancelled when it makes one of these calls does the same. Other tasks waiting on the
/// connection then end with ``StreamConnectionError/closed``.
///
/// **Lifetime.** ``close()`` sends what is queued and closes. Releasing the last reference closes
/// the connection too, at once, dropping what is still queued.
///
/// Thread-safety: `Sendable`; every member from any thread or task. One task at a time iterates
/// ``inbound``.
public final class AsyncStreamConnection: Sendable {
    /// The default ``inboundBufferLimit``: 256 KiB.
    ///
    /// Thread-safety: a constant.
    public static let defaultInboundBufferLimit = 256 * 1024

    /// The options ``connect(to:on:timeout:options:inModes:inboundBufferLimit:)`` uses by default:
    /// ``StreamConnection/Options``' defaults, except that half-closure is allowed
    /// (``StreamConnection/Options/allowsHalfClosure``). A task still takes buffered input after
    /// the peer's end of input, and may still answer it: the connection must stay open for writing
    /// until the task closes it. Pass these (or set `allowsHalfClosure`) for an accepted
    /// connection too; ``IncomingStreamConnections/defaultListenerOptions`` do.
    ///
    /// Thread-safety: a constant.
    public static let defaultOptions: StreamConnection.Options = {
        var options = StreamConnection.Options()
        options.allowsHalfClosure = true
        return options
    }()

    /// The loop that owns the connection and does its I/O.
    ///
    /// Thread-safety: immutable.
    public let loop: PortRunLoop
    /// The connection's own address, as it was when wrapped (nil if it was closed then).
    ///
    /// Thread-safety: immutable.
    public let localEndpoint: SocketEndpoint?
    /// The peer's address, as it was when wrapped (nil if it was closed then).
    ///
    /// Thread-safety: immutable.
    public let remoteEndpoint: SocketEndpoint?
    /// The most bytes read and not yet taken from ``inbound`` before reading pauses.
    ///
    /// Thread-safety: immutable.
    public var inboundBufferLimit: Int { inboundBuffer.limit }

    let core: LoopConfined<AsyncConnectionCore>
    let inboundBuffer: AsyncHandoff<[UInt8]>

    /// Takes `connection` over for async use: it replaces the connection's ``StreamConnection/onRead``
    /// and ``StreamConnection/onEvent`` handlers; do not use the connection directly afterwards.
    /// Call it on the connection's loop thread, typically in a ``StreamListener``'s `onConnection`.
    ///
    /// - Parameters:
    ///   - connection: an open connection, on whose loop's thread this runs.
    ///   - inboundBufferLimit: the bytes buffered for the consumer before reading pauses.
    ///
    /// Thread-safety: the connection's loop thread (checked).
    public init(wrapping connection: StreamConnection, inboundBufferLimit: Int = defaultInboundBufferLimit) {
        connection.loop.preconditionOnLoopThread("AsyncStreamConnection(wrapping:)")
        Misuse.check(inboundBufferLimit > 0, "AsyncStreamConnection: inboundBufferLimit must be positive, got \(inboundBufferLimit)")
        let core = AsyncConnectionCore(connection: connection, inboundBufferLimit: inboundBufferLimit)
        self.loop = connection.loop
        self.localEndpoint = connection.localEndpoint
        self.remoteEndpoint = connection.remoteEndpoint
        self.core = LoopConfined(core)
        self.inboundBuffer = core.inbound
    }

    /// The bytes the peer sends, as chunks in order: the sequence ends at end of input, or throws
    /// the error that ended the connection (``StreamConnectionError/peerReset``, ...) after the
    /// chunks read before it. Each access gives a view of the same buffer: iterate it from one task
    /// at a time; a later loop goes on where an earlier one stopped.
    ///
    /// Thread-safety: any thread.
    public var inbound: InboundBytes { InboundBytes(connection: self) }

    /// Closes the connection on its loop, dropping what is queued: for a cancelled task, or a
    /// connection nobody holds any more.
    func closeNow() {
        let core = self.core
        _ = loop.onOwner { _ in core.value.closeNow() }
    }

    deinit {
        closeNow()
    }
}
