import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// A server spread over a ``RunLoopThreadGroup``: one listener accepting on the first loop hands
/// the connections to every loop in turn, each served on its own loop's thread; or, with
/// `SO_REUSEPORT`, one listener per loop on the same port.
@Suite(.timeLimit(.minutes(1))) struct StreamListenerGroupTests {
    /// What the server saw of one connection: the loop that served it (its index in the group),
    /// and whether each of its handlers ran on that loop's thread.
    private struct Served: Sendable {
        let loopIndex: Int
        let onItsLoopThread: Bool
    }

    @Test func connectionsSpreadEvenlyAndRunOnTheirOwnLoops() async throws {
        let group = try RunLoopThreadGroup(name: "spread", count: 3)
        defer { group.stop() }
        let loops = group.loops
        let served = Recorder<Served>()
        let listener = try StreamListener(on: .host("127.0.0.1", port: 0), group: group) { connection in
            let index = loops.firstIndex { $0 === connection.loop } ?? -1
            served.append(Served(loopIndex: index, onItsLoopThread: connection.loop.isCurrentThread))
            connection.onRead = { connection, bytes in
                served.append(Served(loopIndex: index, onItsLoopThread: connection.loop.isCurrentThread))
                connection.write(bytes)
            }
        }
        defer { listener.close() }
        #expect(listener.loop === group.loops[0])
        let port = try #require(listener.localEndpoint.port)
        let clients = 30
        let echoed = try await offThePool { () -> Int in
            var echoed = 0
            for index in 0..<clients { // one at a time: the accepting loop hands them out in order
                let peer = try RawStreamPeer.connect(port: port)
                try peer.write([UInt8(index)])
                if try peer.read(exactly: 1) == [UInt8(index)] { echoed += 1 }
                peer.close()
            }
            return echoed
        }
        #expect(echoed == clients)
        let records = served.values
        #expect(records.count == 2 * clients) // the connection, and its one read
        #expect(records.allSatisfy { $0.onItsLoopThread })
        let perLoop = (0..<3).map { index in records.filter { $0.loopIndex == index }.count / 2 }
        #expect(perLoop == [10, 10, 10])
    }

    @Test func aGroupOfTwoEchoesToAHundredClients() async throws {
        let group = try RunLoopThreadGroup(name: "echo-group", count: 2)
        let clientThread = try RunLoopThread(name: "echo-clients")
        defer { clientThread.stop(); group.stop() }
        let perLoop = Locked([0, 0])
        let loops = group.loops
        let listener = try StreamListener(on: .host("127.0.0.1", port: 0), group: group) { connection in
            if let index = loops.firstIndex(where: { $0 === connection.loop }) { perLoop.withLock { $0[index] += 1 } }
            connection.onRead = { connection, bytes in connection.write(bytes) }
        }
        defer { listener.close() }
        let endpoint = listener.localEndpoint
        let loop = clientThread.loop
        let results = try await withThrowingTaskGroup(of: Bool.self) { tasks in
            for client in 0..<100 {
                tasks.addTask {
                    let message = patternBytes(2000 + client, seed: client)
                    let connection = try await AsyncStreamConnection.connect(to: endpoint, on: loop, timeout: 20)
                    try await connection.write(message)
                    try await connection.shutdownOutput()
                    var echoed: [UInt8] = []
                    for try await chunk in connection.inbound { echoed += chunk }
                    await connection.close()
                    return echoed == message
                }
            }
            var results: [Bool] = []
            for try await result in tasks { results.append(result) }
            return results
        }
        #expect(results.count == 100)
        #expect(results.allSatisfy { $0 })
        #expect(perLoop.withLock { $0 } == [50, 50])
        #expect(listener.statistics.accepted == 100)
    }

    @Test func listenersWithReusePortShareAPort() async throws {
        let group = try RunLoopThreadGroup(name: "reuse", count: 2)
        defer { group.stop() }
        var options = StreamListener.Options()
        options.reusePort = true
        let accepted = Recorder<Int>()
        let first = try StreamListener(on: .host("127.0.0.1", port: 0), loop: group.loops[0], options: options) { connection in
            accepted.append(0)
            connection.close()
        }
        defer { first.close() }
        let second = try StreamListener(on: first.localEndpoint, loop: group.loops[1], options: options) { connection in
            accepted.append(1)
            connection.close()
        }
        defer { second.close() }
        #expect(second.localEndpoint == first.localEndpoint)
        // Without SO_REUSEPORT the port is taken.
        #expect(throws: StreamConnectionError.addressInUse(first.localEndpoint)) {
            try StreamListener(on: first.localEndpoint, loop: group.loops[1]) { _ in }
        }
        // A client is accepted by one of the two (the kernel picks by a hash of the addresses).
        let port = try #require(first.localEndpoint.port)
        let ended = try await offThePool { try RawStreamPeer.connect(port: port).readToEnd() }
        #expect(ended == [])
        #expect(accepted.count == 1)
    }
}
