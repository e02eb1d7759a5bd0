import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A listener and connections on loop threads: an echo round trip over TCP (IPv4, IPv6) and a
/// Unix socket, and the endpoints each side reports.
@Suite(.timeLimit(.minutes(1))) struct StreamEchoTests {
    /// Starts an echo server on `endpoint`, connects a client, sends `message` and returns what
    /// came back once all of it did.
    private func echo(on endpoint: SocketEndpoint, message: [UInt8]) throws -> (echoed: [UInt8], server: SocketEndpoint) {
        let server = try RunLoopThread(name: "echo-server")
        let client = try RunLoopThread(name: "echo-client")
        defer { client.stop(); server.stop() }
        let listener = try StreamListener(on: endpoint, loop: server.loop) { connection in
            connection.onRead = { connection, bytes in connection.write(bytes) }
        }
        defer { listener.close() }
        let received = Locked<[UInt8]>([])
        let done = Signal()
        let failure = Locked<StreamConnectionError?>(nil)
        StreamConnection.connect(to: listener.localEndpoint, on: client.loop, timeout: 10) { result in
            switch result {
            case .success(let connection):
                connection.onRead = { _, bytes in
                    let count = received.withLock { $0.append(contentsOf: bytes); return $0.count }
                    if count == message.count { done.fire() }
                }
                #expect(connection.write(message))
            case .failure(let error):
                failure.withLock { $0 = error }
                done.fire()
            }
        }
        #expect(done.wait())
        #expect(failure.withLock { $0 } == nil)
        return (received.withLock { $0 }, listener.localEndpoint)
    }

    @Test func echoesOverIPv4() throws {
        let message = Array("hello over IPv4".utf8)
        let (echoed, server) = try echo(on: .host("127.0.0.1", port: 0), message: message)
        #expect(echoed == message)
        guard case .host("127.0.0.1", let port) = server else { Issue.record("endpoint \(server)"); return }
        #expect(port > 0)
    }

    @Test func echoesOverIPv6() throws {
        let message = Array("hello over IPv6".utf8)
        let (echoed, server) = try echo(on: .host("::1", port: 0), message: message)
        #expect(echoed == message)
        guard case .host("::1", _) = server else { Issue.record("endpoint \(server)"); return }
    }

    @Test func echoesOverAUnixSocket() throws {
        let path = NSTemporaryDirectory() + "prl-echo-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let message = Array("hello over a Unix socket".utf8)
        let (echoed, server) = try echo(on: .unix(path: path), message: message)
        #expect(echoed == message)
        #expect(server == .unix(path: path))
    }

    @Test func aNamedHostIsResolvedOffTheLoopThread() throws {
        // "localhost" needs getaddrinfo with a name: the connect resolves it off the loop.
        let message = [UInt8](repeating: 7, count: 300_000) // several reads and partial writes
        let server = try RunLoopThread(name: "named-server")
        defer { server.stop() }
        let listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: server.loop) { connection in
            connection.onRead = { connection, bytes in connection.write(bytes) }
        }
        defer { listener.close() }
        let client = try RunLoopThread(name: "named-client")
        defer { client.stop() }
        let total = Locked(0)
        let done = Signal()
        StreamConnection.connect(to: .host("localhost", port: listener.localEndpoint.port!), on: client.loop) { result in
            guard case .success(let connection) = result else { Issue.record("\(result)"); done.fire(); return }
            #expect(connection.loop === client.loop)
            #expect(connection.remoteEndpoint?.port == listener.localEndpoint.port)
            connection.onRead = { _, bytes in
                if total.withLock({ $0 += bytes.count; return $0 }) == message.count { done.fire() }
            }
            connection.write(message)
        }
        #expect(done.wait())
    }

    @Test func addressInUseIsATypedError() throws {
        let thread = try RunLoopThread(name: "in-use")
        defer { thread.stop() }
        let first = try StreamListener(on: .host("127.0.0.1", port: 0), loop: thread.loop) { _ in }
        defer { first.close() }
        var options = StreamListener.Options()
        options.reuseAddress = false
        #expect(throws: StreamConnectionError.addressInUse(first.localEndpoint)) {
            try StreamListener(on: first.localEndpoint, loop: thread.loop, options: options) { _ in }
        }
        #expect(throws: StreamConnectionError.self) {
            try StreamListener(on: .host("127.0.0.1", port: 70_000), loop: thread.loop) { _ in }
        }
    }
}
