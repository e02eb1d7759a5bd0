import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Writes larger than the socket takes at once: a tiny `SO_SNDBUF` makes every write partial; the
/// rest is queued and sent, in order, as the peer reads.
@Suite(.timeLimit(.minutes(1))) struct StreamPartialWriteTests {
    @Test func aWriteLargerThanTheSendBufferArrivesWholeAndInOrder() throws {
        let total = 2_000_000
        var options = StreamListener.Options()
        options.connection.sendBufferSize = 4096
        options.connection.outboundLimit = 4_000_000
        let queuedAfterWrite = Locked(0)
        let peers = try StreamTestPeers(listenerOptions: options) { connection in
            #expect(connection.write(patternBytes(total)))
            queuedAfterWrite.withLock { $0 = connection.queuedByteCount }
            connection.close(afterFlushing: true)
        }
        defer { peers.stop() }
        let received = Locked(0)
        let mismatches = Locked(0)
        let closed = Signal()
        peers.connect { connection in
            connection.onRead = { _, bytes in
                received.withLock { count in
                    for (offset, value) in bytes.enumerated() where value != byte(at: count + offset) {
                        mismatches.withLock { $0 += 1 }
                    }
                    count += bytes.count
                }
            }
            connection.onEvent = { _, event in
                if case .closed = event { closed.fire() }
            }
        }
        #expect(closed.wait())
        #expect(received.withLock { $0 } == total)
        #expect(mismatches.withLock { $0 } == 0)
        // The kernel took a small part; the rest went through the queue.
        #expect(queuedAfterWrite.withLock { $0 } > total / 2)
    }
}
