import Foundation
import PortRunLoopKit
import PortRunLoopTLS
import PortRunLoopTestSupport
import Testing

/// The TLS module's thread rule: a connection's TLS details are read on its loop's thread, and
/// reading them elsewhere stops the process with the library's message, in release builds as in
/// debug ones.
@Suite(.timeLimit(.minutes(1))) struct TLSMisuseTests {
    @Test func readingTheDetailsOffTheConnectionsThreadIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let server = try RunLoopThread(name: "tls-misuse-server")
            let client = try RunLoopThread(name: "tls-misuse-client")
            let listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: server.loop) { _ in }
            let connected = Locked<StreamConnection?>(nil)
            let ready = DispatchSemaphore(value: 0)
            StreamConnection.connect(to: listener.localEndpoint, on: client.loop) { result in
                connected.withLock { $0 = try? result.get() }
                ready.signal()
            }
            ready.wait()
            guard let connection = connected.withLock({ $0 }) else { exit(0) } // no connection: not the failure looked for
            _ = connection.tlsDetails // on this (the test's) thread, not the client loop's
        }
        expectMisuse(result, "StreamConnection.tlsDetails must be made on the loop's own thread ('tls-misuse-client')",
                     at: "PortRunLoopTLS/StreamConnection+TLS.swift")
    }
}
