import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A peer that reads slowly (here: not at all, then again): the writer's queue passes the
/// high-water mark (writability false), drains below the low one (true); a writer that ignores
/// it is stopped at the outbound limit with a typed error.
@Suite(.timeLimit(.minutes(1))) struct StreamBackPressureTests {
    @Test func writabilityFollowsTheWaterMarksAgainstASlowReader() throws {
        let events = Recorder<StreamConnectionEvent>()
        let becameUnwritable = Signal()
        let becameWritable = Signal()
        let chunk = [UInt8](repeating: 1, count: 16 * 1024)
        let peers = try StreamTestPeers { connection in
            connection.setWaterMarks(low: 64 * 1024, high: 256 * 1024)
            connection.onEvent = { _, event in
                events.append(event)
                if event == .writabilityChanged(false) { becameUnwritable.fire() }
                if event == .writabilityChanged(true) { becameWritable.fire() }
            }
            // Write until not writable, as a well-behaved producer does.
            while connection.isWritable { #expect(connection.write(chunk)) }
            #expect(connection.queuedByteCount > 256 * 1024)
        }
        defer { peers.stop() }
        let reader = Locked<StreamConnection?>(nil)
        let clientReady = Signal()
        peers.connect { connection in
            connection.pauseReading() // the slow reader: reads nothing yet
            connection.onRead = { _, _ in }
            nonisolated(unsafe) let kept = connection
            reader.withLock { $0 = kept }
            clientReady.fire()
        }
        #expect(clientReady.wait())
        #expect(becameUnwritable.wait())
        #expect(events.values == [.writabilityChanged(false)])
        // The reader catches up: the queue drains below the low-water mark.
        try peers.clientThread.loop.performAndWait {
            nonisolated(unsafe) let connection = reader.withLock { $0 }
            connection?.resumeReading()
        }
        #expect(becameWritable.wait())
        #expect(events.values == [.writabilityChanged(false), .writabilityChanged(true)])
    }

    @Test func aWriterThatIgnoresWritabilityIsStoppedAtTheLimit() throws {
        let closedWith = Locked<StreamConnectionError??>(nil)
        let closed = Signal()
        let refusedWrites = Locked(0)
        var options = StreamListener.Options()
        options.connection.outboundLimit = 1024 * 1024
        let peers = try StreamTestPeers(listenerOptions: options) { connection in
            connection.onEvent = { _, event in
                if case .closed(let error) = event {
                    closedWith.withLock { $0 = .some(error) }
                    closed.fire()
                }
            }
            let chunk = [UInt8](repeating: 2, count: 64 * 1024)
            for _ in 0..<100 where !connection.write(chunk) { refusedWrites.withLock { $0 += 1 } }
            #expect(!connection.isOpen)
        }
        defer { peers.stop() }
        peers.connect { connection in connection.pauseReading() }
        #expect(closed.wait())
        #expect(closedWith.withLock { $0 } == .some(.outboundLimitExceeded(limit: 1024 * 1024)))
        #expect(refusedWrites.withLock { $0 } > 0)
    }
}
