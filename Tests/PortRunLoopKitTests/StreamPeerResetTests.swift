import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A peer that resets the connection (a close with `SO_LINGER` 0 sends RST) while the other side
/// is writing: the writer's connection closes with ``StreamConnectionError/peerReset``, reported
/// once, and its descriptor is released.
@Suite(.timeLimit(.minutes(1))) struct StreamPeerResetTests {
    @Test func aResetMidWriteClosesWithPeerReset() throws {
        let closedWith = Recorder<StreamConnectionError?>()
        let closed = Signal()
        let writing = Signal()
        let peers = try StreamTestPeers { connection in
            connection.onEvent = { connection, event in
                if case .closed(let error) = event {
                    closedWith.append(error)
                    #expect(connection.fileDescriptor == -1)
                    closed.fire()
                }
                if event == .writabilityChanged(true) { connection.write([UInt8](repeating: 3, count: 256 * 1024)) }
            }
            // Keep the queue busy: the peer reads nothing, so this stays queued.
            connection.write([UInt8](repeating: 3, count: 1024 * 1024))
            writing.fire()
        }
        defer { peers.stop() }
        peers.connect { connection in
            connection.pauseReading()
            connection.onEvent = { _, _ in }
            #expect(writing.wait())
            // Reset: linger 0, then close the descriptor under the connection.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            #expect(setsockopt(connection.fileDescriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size)) == 0)
            connection.close()
        }
        #expect(closed.wait())
        try peers.server.loop.performAndWait {}
        #expect(closedWith.values == [.peerReset])
    }
}
