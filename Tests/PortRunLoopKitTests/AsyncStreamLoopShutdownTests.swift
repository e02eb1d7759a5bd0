import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// The loop of an ``AsyncStreamConnection`` shuts down while tasks wait on it: each wait ends with
/// ``StreamConnectionError/loopShutDown`` (none is left suspended), and so do later calls.
@Suite(.timeLimit(.minutes(1))) struct AsyncStreamLoopShutdownTests {
    @Test func waitingTasksEndWhenTheLoopShutsDown() async throws {
        let thread = try RunLoopThread(name: "shutdown-waits")
        let peerListener = try RawStreamListener()
        peerListener.setReceiveBufferSize(16 * 1024)
        var options = AsyncStreamConnection.defaultOptions
        options.sendBufferSize = 16 * 1024
        options.highWaterMark = 32 * 1024
        options.lowWaterMark = 0
        let accepting = Task { try await offThePool { try peerListener.accept() } }
        let connection = try await AsyncStreamConnection.connect(to: .host("127.0.0.1", port: peerListener.port),
                                                                  on: thread.loop, options: options)
        let peer = try await accepting.value
        let writes = Locked(0)
        let writer = Task { () async -> StreamConnectionError? in
            await thrownError { () async throws(StreamConnectionError) in
                while true {
                    try await connection.write([UInt8](repeating: 3, count: 64 * 1024))
                    writes.withLock { $0 += 1 }
                }
            }
        }
        let reader = Task { () async -> StreamConnectionError? in
            await thrownError { () async throws(StreamConnectionError) in
                for try await _ in connection.inbound {}
            }
        }
        #expect(await eventuallyAsync { writes.withLock { $0 } >= 1 })
        await offThePool { thread.stop() }
        #expect(await writer.value == .loopShutDown)
        #expect(await reader.value == .loopShutDown)
        #expect(await thrownError { () async throws(StreamConnectionError) in try await connection.write([1]) } == .loopShutDown)
        await connection.close() // returns: the connection is closed
        _ = try? await offThePool { try peer.readToEnd() }
    }
}
