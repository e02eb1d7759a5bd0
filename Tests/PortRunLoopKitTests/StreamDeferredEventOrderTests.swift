import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// An event found inside a call of the user's is reported before the loop's next turn, and
/// before any event found later (Semantics S5): here an output shutdown done inside a block, with
/// the peer's end waiting in the socket when the loop wakes for that block, is reported before the
/// end of input and the close, and not lost with the handlers after `closed`. (The connection keeps
/// such events in order itself, so the order holds however the loop interleaves the report's block
/// with readiness: its idle spin may handle a readiness before queued blocks are collected.)
@Suite(.timeLimit(.minutes(1))) struct StreamDeferredEventOrderTests {
    @Test func anOutputShutdownReportedLaterPrecedesThePeersEndFoundInTheSameTurn() throws {
        var options = StreamListener.Options()
        options.connection.allowsHalfClosure = true
        let accepted = Signal()
        let server = Locked<StreamConnection?>(nil)
        let serverEnded = Signal()
        let peers = try StreamTestPeers(listenerOptions: options) { connection in
            connection.onEvent = { _, event in if event == .outputShutDown { serverEnded.fire() } }
            nonisolated(unsafe) let kept = connection // used on the server loop's thread only
            server.withLock { $0 = kept }
            accepted.fire()
        }
        defer { peers.stop() }
        let events = Recorder<StreamConnectionEvent>()
        let closed = Signal()
        let connected = Signal()
        let client = Locked<StreamConnection?>(nil)
        var clientOptions = StreamConnection.Options()
        clientOptions.allowsHalfClosure = true
        peers.connect(options: clientOptions) { connection in
            connection.onEvent = { _, event in
                events.append(event)
                if case .closed = event { closed.fire() }
            }
            nonisolated(unsafe) let kept = connection // used on the client loop's thread only
            client.withLock { $0 = kept }
            connected.fire()
        }
        #expect(connected.wait() && accepted.wait())
        // The client's loop is held in a block while the server's end reaches its socket and the
        // block below is queued: its next wait finds both, so the turn after it runs that block
        // (whose report is queued for a later turn) and then reads the end of input.
        let release = holdLoop(peers.clientThread)
        try peers.server.loop.performAndWait {
            nonisolated(unsafe) let connection = server.withLock { $0 }
            connection?.shutdownOutput()
        }
        #expect(serverEnded.wait()) // reported after the shutdown(2) that sent the end
        peers.clientThread.loop.perform {
            nonisolated(unsafe) let connection = client.withLock { $0 }
            connection?.shutdownOutput() // nothing queued: done now, reported later
        }
        release.fire()
        #expect(closed.wait())
        #expect(events.values == [.outputShutDown, .inputEnded, .closed(nil)])
    }
}
