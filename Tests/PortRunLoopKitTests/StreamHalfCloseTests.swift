import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Half-closure both ways: a side that shuts its output down still reads; the other side sees
/// end of input and may go on writing (with half-closure allowed) or closes after flushing (by
/// default).
@Suite(.timeLimit(.minutes(1))) struct StreamHalfCloseTests {
    @Test func theClientShutsDownAndStillReadsTheServersReply() throws {
        var options = StreamListener.Options()
        options.connection.allowsHalfClosure = true
        let serverEvents = Recorder<StreamConnectionEvent>()
        let peers = try StreamTestPeers(listenerOptions: options) { connection in
            var request: [UInt8] = [] // plain local state: the handlers run on this loop only
            connection.onRead = { _, bytes in request.append(contentsOf: bytes) }
            connection.onEvent = { connection, event in
                serverEvents.append(event)
                guard event == .inputEnded else { return }
                // Input ended; the output is still open: answer, then end it too.
                #expect(connection.write("reply to " + String(decoding: request, as: UTF8.self)))
                connection.shutdownOutput()
            }
        }
        defer { peers.stop() }
        let reply = Locked<[UInt8]>([])
        let clientEvents = Recorder<StreamConnectionEvent>()
        let closed = Signal()
        var clientOptions = StreamConnection.Options()
        clientOptions.allowsHalfClosure = true
        peers.connect(options: clientOptions) { connection in
            connection.onRead = { _, bytes in reply.withLock { $0.append(contentsOf: bytes) } }
            connection.onEvent = { _, event in
                clientEvents.append(event)
                if case .closed = event { closed.fire() }
            }
            connection.write("ping")
            connection.shutdownOutput()
            #expect(!connection.write("too late"))
        }
        #expect(closed.wait())
        #expect(String(decoding: reply.withLock { $0 }, as: UTF8.self) == "reply to ping")
        #expect(clientEvents.values == [.outputShutDown, .inputEnded, .closed(nil)])
        try peers.server.loop.performAndWait {} // the server's last events are reported
        #expect(serverEvents.values.prefix(2) == [.inputEnded, .outputShutDown])
    }

    @Test func withoutHalfClosureEndOfInputFlushesAndCloses() throws {
        let serverEvents = Recorder<StreamConnectionEvent>()
        let serverClosed = Signal()
        let peers = try StreamTestPeers { connection in
            connection.onRead = { connection, bytes in connection.write(bytes) }
            connection.onEvent = { _, event in
                serverEvents.append(event)
                if case .closed = event { serverClosed.fire() }
            }
        }
        defer { peers.stop() }
        let echoed = Locked<[UInt8]>([])
        let clientClosed = Signal()
        var clientOptions = StreamConnection.Options()
        clientOptions.allowsHalfClosure = true
        peers.connect(options: clientOptions) { connection in
            connection.onRead = { _, bytes in echoed.withLock { $0.append(contentsOf: bytes) } }
            connection.onEvent = { _, event in
                if case .closed = event { clientClosed.fire() }
            }
            connection.write("last words")
            connection.shutdownOutput()
        }
        #expect(serverClosed.wait())
        #expect(clientClosed.wait())
        #expect(serverEvents.values == [.inputEnded, .closed(nil)])
        #expect(String(decoding: echoed.withLock { $0 }, as: UTF8.self) == "last words")
    }
}
