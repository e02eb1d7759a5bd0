import Foundation
import PortRunLoopKit
import Testing

/// The README's echo-server example, verbatim (between the markers), so the README cannot drift
/// from the stream-socket API.
@Suite(.timeLimit(.minutes(1))) struct ReadmeEchoExampleTests {
    @Test func echoExampleCompilesAndRuns() throws {
        // README echo example begins
        // The server: a loop thread, and a listener whose connections write back whatever they read.
        let server = try RunLoopThread(name: "echo-server")
        let listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: server.loop) { connection in
            connection.onRead = { connection, bytes in connection.write(bytes) }
        }
        print("listening on", listener.localEndpoint)

        // The client: another loop thread connects, sends a line, and closes once the line is back.
        let client = try RunLoopThread(name: "echo-client")
        let finished = DispatchSemaphore(value: 0)
        StreamConnection.connect(to: listener.localEndpoint, on: client.loop) { result in
            guard case .success(let connection) = result else { print("connect failed:", result); return }
            var received = ""
            connection.onRead = { connection, bytes in
                received += String(decoding: bytes, as: UTF8.self)
                guard received.hasSuffix("\n") else { return }
                print("echoed:", received, terminator: "")
                connection.close()
                finished.signal()
            }
            connection.write("hello, echo\n")
        }
        let echoed = finished.wait(timeout: .now() + 10) == .success

        client.stop()
        listener.close()
        server.stop()
        // README echo example ends
        #expect(echoed)
        #expect(listener.statistics.accepted == 1)
    }

    @Test func readmeCodeBlockMatchesThisFile() throws {
        let (test, readme) = try ReadmeCodeBlocks.compare(testFile: #filePath, marker: "README echo example", heading: "## A TCP echo server")
        #expect(readme == test)
    }
}
