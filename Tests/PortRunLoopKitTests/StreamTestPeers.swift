import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport

/// A server on its own loop thread and a client connection on another, for the stream tests.
/// `serve` runs on the server's loop thread with each accepted connection; the client's
/// connection is handed to `client` on the client's loop thread.
final class StreamTestPeers: Sendable {
    let server: RunLoopThread
    let clientThread: RunLoopThread
    let listener: StreamListener

    init(listenerOptions: StreamListener.Options = StreamListener.Options(),
         serve: @escaping @Sendable (StreamConnection) -> Void) throws {
        server = try RunLoopThread(name: "stream-server")
        clientThread = try RunLoopThread(name: "stream-client")
        listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: server.loop, options: listenerOptions,
                                      onConnection: serve)
    }

    /// Connects a client with `options`; `client` runs on the client loop's thread once connected.
    func connect(options: StreamConnection.Options = StreamConnection.Options(),
                 _ client: @escaping @Sendable (StreamConnection) -> Void) {
        StreamConnection.connect(to: listener.localEndpoint, on: clientThread.loop, options: options) { result in
            switch result {
            case .success(let connection): client(connection)
            case .failure(let error): fatalError("test client could not connect: \(error)")
            }
        }
    }

    func stop() {
        listener.close()
        clientThread.stop()
        server.stop()
    }
}

/// `count` bytes of a pattern whose every position is checkable (`byte(at:)`).
func patternBytes(_ count: Int) -> [UInt8] { (0..<count).map { byte(at: $0) } }
func byte(at index: Int) -> UInt8 { UInt8(truncatingIfNeeded: index &* 31 &+ index >> 8) }
