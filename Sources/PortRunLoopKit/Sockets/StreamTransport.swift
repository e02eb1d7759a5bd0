/// The byte layer of a ``StreamConnection`` other than the plain socket: TLS (the
/// `PortRunLoopTLS` module) implements it over the connection's descriptor. A connection without
/// one reads and writes the socket itself (`recv`/`send`, no call through a protocol).
///
/// Every requirement runs on the connection's loop thread, inside the connection's own handling:
/// a transport calls no user code.
///
/// Thread-safety: the connection's loop thread only.
package protocol StreamTransport: AnyObject {
    /// Moves the transport's opening (a TLS handshake) one step: ``StreamTransportIO/done(_:)``
    /// once it is complete (its count unused), ``StreamTransportIO/wouldBlock(_:)`` with the
    /// readiness it waits for, or how it failed.
    func start(fileDescriptor: Int32) -> StreamTransportIO
    /// Reads up to `buffer.count` bytes of the stream.
    func read(fileDescriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> StreamTransportIO
    /// Writes up to `bytes.count` bytes of the stream.
    func write(fileDescriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> StreamTransportIO
    /// Tells the peer no more comes (TLS: `close_notify`), then shuts the socket's output down.
    func shutdownOutput(fileDescriptor: Int32) -> StreamTransportIO
    /// Bytes the transport has read from the socket and not yet returned (TLS: a decrypted
    /// record's rest), which no readiness will announce.
    var hasBufferedInput: Bool { get }
    /// Frees the transport's state; the connection closes the descriptor after.
    func close()
}

/// What one step of a ``StreamTransport`` did.
///
/// Thread-safety: a value type.
package enum StreamTransportIO {
    /// This many bytes moved (a read's never 0: that is ``end``), or the step completed.
    case done(Int)
    /// The step needs this readiness of the socket first (TLS may need to read to write).
    case wouldBlock(FileDescriptorSource.Events)
    /// A read found the end of the stream.
    case end
    case failed(StreamConnectionError)
}

/// Makes the transport of a connection accepted or connected on `fileDescriptor`, for the host
/// name it connected to (nil for an accepted one).
package typealias StreamTransportMaker = @Sendable (_ fileDescriptor: Int32, _ hostName: String?) throws(StreamConnectionError) -> any StreamTransport
