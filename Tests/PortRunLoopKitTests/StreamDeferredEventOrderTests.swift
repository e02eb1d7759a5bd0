import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// An event found inside a call of the user's is reported before the loop's next turn, and
/// before any event found later: when a readiness handled before that report (the peer's end,
/// already in the socket) ends the connection, the earlier event still comes first, and is not
/// lost with the handlers after `closed` (Semantics S5).
@Suite(.timeLimit(.minutes(1))) struct StreamDeferredEventOrderTests {
    @Test func anOutputShutdownReportedLaterPrecedesThePeersEndFoundInTheSameTurn() throws {
        var options = StreamListener.Options()
        options.connection.allowsHalfClosure = true
        let serverEnded = Signal()
        let peers = try StreamTestPeers(listenerOptions: options) { connection in
            connection.onEvent = { _, event in if event == .outputShutDown { serverEnded.fire() } }
            connection.shutdownOutput()
        }
        defer { peers.stop() }
        let events = Recorder<StreamConnectionEvent>()
        let closed = Signal()
        var clientOptions = StreamConnection.Options()
        clientOptions.allowsHalfClosure = true
        peers.connect(options: clientOptions) { connection in
            connection.onEvent = { _, event in
                events.append(event)
                if case .closed = event { closed.fire() }
            }
            // The server's end is in this socket before this call returns, so the loop finds it
            // readable in the same turn, before the block that reports what this call found.
            _ = serverEnded.wait()
            connection.shutdownOutput() // nothing queued: done now, reported later
        }
        #expect(closed.wait())
        #expect(events.values == [.outputShutDown, .inputEnded, .closed(nil)])
    }
}
