import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import Testing
import PortRunLoopTestSupport

/// ALPN between our client and our server: the server's preference wins among the protocols
/// both have, a client offering none of the server's fails the handshake, a client offering none
/// at all is served without ALPN.
@Suite(.timeLimit(.minutes(1))) struct TLSALPNTests {
    /// Connects a client offering `offered` to a server accepting `accepted`; the client's log and
    /// the listener's statistics once the connect finished.
    private func negotiate(offered: [String], accepted: [String]) throws -> (client: [PeerRecord], server: [PeerRecord], dropped: Int) {
        let certificates = try TestCertificates()
        let serverContext = try TLSContext(.server(certificateChain: .file(path: certificates.serverCertificate),
                                                   privateKey: .file(path: certificates.serverKey), alpnProtocols: accepted))
        let clientContext = try TLSContext(.client(trustRoots: .certificates(.file(path: certificates.caCertificate)),
                                                   alpnProtocols: offered))
        let server = try RunLoopThread(name: "alpn-server")
        let clientThread = try RunLoopThread(name: "alpn-client")
        defer { clientThread.stop(); server.stop() }
        let serverSide = ConnectionRecorder(loop: server.loop)
        let listener = try StreamListener(tlsOn: .host("127.0.0.1", port: 0), context: serverContext, loop: server.loop) { connection in
            serverSide.attach(connection)
        }
        defer { listener.close() }
        let client = ConnectionRecorder(loop: clientThread.loop)
        client.connect(to: listener.localEndpoint, context: clientContext, serverName: "localhost")
        #expect(client.log.wait { $0.details != nil || $0.isFinished })
        if client.log.values.details != nil { #expect(serverSide.log.wait { $0.details != nil }) }
        _ = eventually { listener.statistics.dropped + listener.statistics.accepted == 1 }
        return (client.log.values, serverSide.log.values, listener.statistics.dropped)
    }

    @Test func theServersPreferenceAmongTheProtocolsBothHaveWins() throws {
        let (client, server, _) = try negotiate(offered: ["x-c", "x-b", "x-a"], accepted: ["x-a", "x-b"])
        #expect(client.details?.alpnProtocol == "x-a")
        #expect(server.details?.alpnProtocol == "x-a")
    }

    @Test func noProtocolInCommonFailsTheHandshake() throws {
        let (client, _, dropped) = try negotiate(offered: ["x-c"], accepted: ["x-a"])
        guard case .tls(let failure) = client.connectFailure else { Issue.record("\(client)"); return }
        #expect(failure.kind == .handshakeFailed)
        #expect(failure.reason.contains("no application protocol"), "\(failure)")
        #expect(dropped == 1)
    }

    @Test func aClientOfferingNoneIsServedWithoutALPN() throws {
        let (client, server, _) = try negotiate(offered: [], accepted: ["x-a"])
        #expect(client.connectFailure == nil)
        #expect(client.details?.alpnProtocol == nil)
        #expect(server.details != nil)
        #expect(server.details?.alpnProtocol == nil)
    }
}
