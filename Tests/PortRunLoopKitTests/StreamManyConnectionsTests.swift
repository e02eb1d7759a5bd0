import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A thousand connections at once on one server loop, each echoed in full.
@Suite(.timeLimit(.minutes(1))) struct StreamManyConnectionsTests {
    @Test func aThousandConcurrentConnectionsAreAllServed() throws {
        let count = 1000
        let peers = try StreamTestPeers { connection in
            connection.onRead = { connection, bytes in connection.write(bytes) }
        }
        defer { peers.stop() }
        let finished = Locked(0)
        let failures = Locked(0)
        let allDone = Signal()
        let message = Array("0123456789abcdef".utf8)
        for _ in 0..<count {
            peers.connect { connection in
                var got = 0
                connection.onRead = { connection, bytes in
                    got += bytes.count
                    if got == message.count { connection.close() }
                }
                connection.onEvent = { _, event in
                    guard case .closed(let error) = event else { return }
                    if error != nil || got != message.count { failures.withLock { $0 += 1 } }
                    if finished.withLock({ $0 += 1; return $0 }) == count { allDone.fire() }
                }
                connection.write(message)
            }
        }
        #expect(allDone.wait(seconds: 50))
        #expect(failures.withLock { $0 } == 0)
        #expect(peers.listener.statistics.accepted == count)
    }
}
