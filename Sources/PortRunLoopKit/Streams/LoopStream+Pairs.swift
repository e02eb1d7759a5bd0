import Foundation

extension LoopStream {
    /// Bytes an input stream of a connected pair buffers before its connection stops reading.
    static let connectedInputLimit = 256 * 1024

    /// A pair of streams to `endpoint` (`CFStreamCreatePairWithSocketToHost`): nothing is done
    /// until one of them opens, which starts the connect (a host name is resolved off the loop's
    /// thread). A connect that fails (refused, unresolvable, past `timeout`, an invalid endpoint)
    /// puts the opened streams in `.error` with the ``StreamConnectionError``.
    ///
    /// - Parameters:
    ///   - endpoint: where to connect.
    ///   - options: the connection's buffering and socket options (half-closure is always on:
    ///     each stream of the pair closes its own direction).
    ///   - timeout: the connect's deadline, name resolution included, counted from the first open.
    ///   - inputStream: set to the pair's input stream.
    ///   - outputStream: set to the pair's output stream.
    ///
    /// Thread-safety: any thread; the streams bind to a loop at their first schedule or open.
    public static func getStreams(to endpoint: SocketEndpoint, options: StreamConnection.Options = StreamConnection.Options(),
                                  timeout: TimeInterval = 30,
                                  inputStream: inout LoopInputStream?, outputStream: inout LoopOutputStream?) {
        Misuse.check(!timeout.isNaN, "LoopStream.getStreams(to:): the timeout is NaN")
        let socket = LoopStreamSocket(origin: .endpoint(endpoint, timeout: timeout), options: options,
                                      inputLimit: connectedInputLimit, servesInput: true, servesOutput: true)
        (inputStream, outputStream) = streams(sharing: socket)
    }

    /// A pair of streams to TCP port `port` of `hostname` (a name, or a numeric IPv4 or IPv6
    /// address): Foundation's `Stream.getStreamsToHost(withName:port:inputStream:outputStream:)`.
    /// See ``getStreams(to:options:timeout:inputStream:outputStream:)``.
    ///
    /// Thread-safety: any thread.
    public static func getStreamsToHost(withName hostname: String, port: Int,
                                        inputStream: inout LoopInputStream?, outputStream: inout LoopOutputStream?) {
        getStreams(to: .host(hostname, port: port), inputStream: &inputStream, outputStream: &outputStream)
    }

    /// A pair of streams to the Unix stream socket at `path` (`CFStreamCreatePairWithSocket` over
    /// a connected `AF_UNIX` socket). See ``getStreams(to:options:timeout:inputStream:outputStream:)``.
    ///
    /// Thread-safety: any thread.
    public static func getStreamsToUnixSocket(atPath path: String,
                                              inputStream: inout LoopInputStream?, outputStream: inout LoopOutputStream?) {
        getStreams(to: .unix(path: path), inputStream: &inputStream, outputStream: &outputStream)
    }

    /// A pair of streams over `connection`, one a ``StreamListener`` accepted
    /// (`CFStreamCreatePairWithSocket` over the native socket of `kCFSocketAcceptCallBack`). The
    /// streams take over the connection's handlers at once (bytes it reads from now on wait in the
    /// input stream), belong to its loop, and are served in its modes; they open, on a later
    /// turn, when opened. Closing the output shuts the connection's output down; for the output
    /// to outlive the peer's end, the listener makes its connections with
    /// ``StreamConnection/Options/allowsHalfClosure``. A connection that closes without an error
    /// puts the open streams at their end (`.endEncountered`).
    ///
    /// Thread-safety: the connection's loop thread.
    public static func getStreams(over connection: StreamConnection,
                                  inputStream: inout LoopInputStream?, outputStream: inout LoopOutputStream?) {
        connection.loop.preconditionOnLoopThread("LoopStream.getStreams(over:)")
        let socket = LoopStreamSocket(origin: .adopted, options: connection.options,
                                      inputLimit: connectedInputLimit, servesInput: true, servesOutput: true)
        let (input, output) = streams(sharing: socket)
        socket.adopt(connection)
        inputStream = input
        outputStream = output
    }

    /// Two streams bound to each other (`CFStreamCreateBoundPair`, Foundation's
    /// `Stream.getBoundStreams(withBufferSize:inputStream:outputStream:)`): what is written to
    /// `outputStream` is read from `inputStream`, through the two ends of a Unix `socketpair`.
    /// Unlike a connected pair, each stream may live in a loop of its own (a producer thread
    /// writes, a consumer thread reads). Closing the output makes the input reach its end after
    /// the bytes written before; closing the input makes later writes fail (`.peerReset`).
    ///
    /// `bufferSize` bounds what is held between the two, approximately: the output's high-water
    /// mark, the input's buffer, and the sockets' kernel buffers (which the kernel rounds up).
    /// Without descriptors, both streams fail when opened, with the `socketpair` error.
    ///
    /// Thread-safety: any thread; each stream binds to a loop at its first schedule or open.
    public static func getBoundStreams(withBufferSize bufferSize: Int,
                                       inputStream: inout LoopInputStream?, outputStream: inout LoopOutputStream?) {
        Misuse.check(bufferSize > 0, "LoopStream.getBoundStreams(withBufferSize:): the buffer size must be positive, got \(bufferSize)")
        var options = StreamConnection.Options()
        options.highWaterMark = bufferSize
        options.lowWaterMark = bufferSize / 2
        options.sendBufferSize = bufferSize
        options.receiveBufferSize = bufferSize
        options.noDelay = false
        let readingOrigin: LoopStreamSocket.Origin
        let writingOrigin: LoopStreamSocket.Origin
        switch System.makeStreamSocketPair() {
        case .success(let (reading, writing)):
            readingOrigin = .descriptor(reading)
            writingOrigin = .descriptor(writing)
        case .failure(let error):
            readingOrigin = .unusable(.system(call: "socketpair", errno: error.code))
            writingOrigin = readingOrigin
        }
        let readingSocket = LoopStreamSocket(origin: readingOrigin, options: options, inputLimit: bufferSize,
                                             servesInput: true, servesOutput: false)
        let writingSocket = LoopStreamSocket(origin: writingOrigin, options: options, inputLimit: bufferSize,
                                             servesInput: false, servesOutput: true)
        let input = LoopInputStream(socket: readingSocket)
        let output = LoopOutputStream(socket: writingSocket)
        readingSocket.input = input
        writingSocket.output = output
        inputStream = input
        outputStream = output
    }

    /// The two streams of one socket, linked to it.
    private static func streams(sharing socket: LoopStreamSocket) -> (LoopInputStream, LoopOutputStream) {
        let input = LoopInputStream(socket: socket)
        let output = LoopOutputStream(socket: socket)
        socket.input = input
        socket.output = output
        return (input, output)
    }
}
