import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A stream event by a short name, for comparing recorded sequences.
func eventName(_ event: Stream.Event) -> String {
    switch event {
    case .openCompleted: "open"
    case .hasBytesAvailable: "bytes"
    case .hasSpaceAvailable: "space"
    case .endEncountered: "end"
    case .errorOccurred: "error"
    default: "event(\(event.rawValue))"
    }
}

/// A delegate that records the events of each stream it serves, in order, and may act on them
/// (`reaction`). Lives on the streams' loop thread, like the streams.
final class StreamEventRecorder: LoopStreamDelegate {
    private(set) var input: [String] = []
    private(set) var output: [String] = []
    /// Also checks that every call comes on `loop`'s thread.
    let loop: PortRunLoop
    /// Called after each event is recorded, with the recorder itself (so it need not capture it).
    var reaction: ((StreamEventRecorder, LoopStream, Stream.Event) -> Void)?

    init(loop: PortRunLoop) { self.loop = loop }

    func stream(_ stream: LoopStream, handle event: Stream.Event) {
        #expect(loop.isCurrentThread)
        if stream is LoopInputStream { input.append(eventName(event)) } else { output.append(eventName(event)) }
        reaction?(self, stream, event)
    }

    func count(_ name: String, in events: [String]) -> Int { events.filter { $0 == name }.count }
}

/// Runs the calling thread's `loop` in `mode` until `condition` holds, for at most `seconds` (a
/// bound against hangs: the condition is what is waited for). Returns whether it held.
@discardableResult
func runLoop(_ loop: PortRunLoop, mode: RunLoop.Mode = .default, seconds: Double = 10, until condition: () -> Bool) -> Bool {
    let end = Date(timeIntervalSinceNow: seconds)
    while !condition() {
        if Date() >= end { return false }
        loop.run(mode: mode, before: min(end, Date(timeIntervalSinceNow: 0.05)))
    }
    return true
}

/// Runs `turns` turns of `mode` that do not wait: what was queued or is ready for the mode is
/// handled.
func runTurns(_ loop: PortRunLoop, mode: RunLoop.Mode, _ turns: Int = 3) {
    for _ in 0..<turns { loop.run(mode: mode, before: Date(timeIntervalSinceNow: -1)) }
}

/// Reads everything `input` has buffered.
func readAll(_ input: LoopInputStream) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
        let count = input.read(&chunk, maxLength: chunk.count)
        guard count > 0 else { break }
        bytes += chunk[0..<count]
    }
    return bytes
}

/// Writes all of `bytes` now, as far as the stream accepts them; returns how many it took.
@discardableResult
func writeSome(_ output: LoopOutputStream, _ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBufferPointer { output.write($0.baseAddress!, maxLength: $0.count) }
}

/// The server side of a stream test: a listener on its own loop thread, and the connections it
/// accepted (touched on that thread only), which the test reaches through ``onServer(_:)``.
/// A stream pair to `127.0.0.1:port` (``LoopStream/getStreamsToHost(withName:port:inputStream:outputStream:)``).
func streamPair(toPort port: Int) -> (LoopInputStream, LoopOutputStream) {
    var input: LoopInputStream?
    var output: LoopOutputStream?
    LoopStream.getStreamsToHost(withName: "127.0.0.1", port: port, inputStream: &input, outputStream: &output)
    return (input!, output!)
}

final class StreamTestServer: @unchecked Sendable {
    let thread: RunLoopThread
    private(set) var listener: StreamListener!
    /// The accepted connections: the server loop's thread only.
    private var connections: [StreamConnection] = []
    /// Events of the accepted connections, in order.
    let events = Recorder<StreamConnectionEvent>()
    let accepted = Signal()
    /// Fired when an accepted connection reports ``StreamConnectionEvent/closed(_:)``.
    let closed = Signal()

    /// A server on a fresh loopback port; `setUp` runs on the server's thread with each connection
    /// (default: echo every byte back).
    init(options: StreamListener.Options = StreamListener.Options(),
         setUp: @escaping @Sendable (StreamConnection) -> Void = { connection in
             connection.onRead = { connection, bytes in connection.write(bytes) }
         }) throws {
        thread = try RunLoopThread(name: "stream-test-server")
        listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: thread.loop, options: options) { [self] connection in
            connections.append(connection)
            setUp(connection)
            let setHandler = connection.onEvent
            connection.onEvent = { [events, closed] connection, event in
                events.append(event)
                if case .closed = event { closed.fire() }
                setHandler?(connection, event)
            }
            accepted.fire()
        }
    }

    var port: Int { listener.localEndpoint.port! }

    /// Runs `body` with the first accepted connection, on the server's thread, and waits for it.
    func onServer(_ body: @escaping @Sendable (StreamConnection) -> Void) throws {
        try thread.loop.performAndWait { [self] in
            guard let connection = connections.first else { Issue.record("no connection accepted"); return }
            body(connection)
        }
    }

    func stop() {
        listener.close()
        thread.stop()
    }
}

/// The path of `tool` on `PATH`, or nil when it is not installed.
func executablePath(_ tool: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(tool)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// A value handed to one other thread before either uses it again (a stream given to the thread
/// of the loop it will live in).
final class HandedOver<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
