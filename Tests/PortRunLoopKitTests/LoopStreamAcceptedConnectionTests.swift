import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `getStreams(over:)`: a server's side in streams, over a connection its listener accepted
/// (`CFStreamCreatePairWithSocket` in an accept callback).
@Suite(.timeLimit(.minutes(1))) struct LoopStreamAcceptedConnectionTests {
    /// The server's side: answers each byte in upper case, and ends its output after the peer's
    /// end. Keeps itself alive until both its streams are done.
    final class Upcaser: LoopStreamDelegate {
        let input: LoopInputStream
        let output: LoopOutputStream
        let events: Recorder<String>
        private var pending: [UInt8] = []
        private var keepAlive: Upcaser?

        init(connection: StreamConnection, events: Recorder<String>) {
            var input: LoopInputStream?
            var output: LoopOutputStream?
            LoopStream.getStreams(over: connection, inputStream: &input, outputStream: &output)
            self.input = input!
            self.output = output!
            self.events = events
            keepAlive = self
            for stream in [self.input, self.output] as [LoopStream] {
                stream.delegate = self
                stream.schedule(in: connection.loop, forMode: .default)
                stream.open()
            }
        }

        func stream(_ stream: LoopStream, handle event: Stream.Event) {
            events.append((stream === input ? "in " : "out ") + eventName(event))
            switch event {
            case .hasBytesAvailable:
                pending += readAll(input).map { $0 >= 97 && $0 <= 122 ? $0 - 32 : $0 }
                flush()
            case .hasSpaceAvailable:
                flush()
            case .endEncountered:
                input.close()
                flush()
            default:
                break
            }
        }

        private func flush() {
            if !pending.isEmpty, output.hasSpaceAvailable {
                let count = writeSome(output, pending)
                if count > 0 { pending.removeFirst(count) }
            }
            if pending.isEmpty, input.streamStatus == .closed {
                output.close()
                keepAlive = nil
            }
        }
    }

    @Test func aServerAnswersThroughStreamsOverTheAcceptedConnection() throws {
        var options = StreamListener.Options()
        options.connection.allowsHalfClosure = true
        let events = Recorder<String>()
        let server = try StreamTestServer(options: options) { connection in
            _ = Upcaser(connection: connection, events: events)
        }
        defer { server.stop() }
        let port = server.port
        let answer = try onFreshThread { () -> String in
            let loop = PortRunLoop.current
            let (reader, writer) = streamPair(toPort: port)
            let recorder = StreamEventRecorder(loop: loop)
            var answer: [UInt8] = []
            recorder.reaction = { _, stream, event in
                if stream === writer, event == .hasSpaceAvailable {
                    _ = writeSome(writer, Array("hello, streams".utf8))
                    writer.close()
                }
                if event == .hasBytesAvailable { answer += readAll(reader) }
            }
            for stream in [reader, writer] as [LoopStream] {
                stream.delegate = recorder
                stream.schedule(in: loop, forMode: .default)
                stream.open()
            }
            guard runLoop(loop, until: { recorder.input.contains("end") }) else { return "no end" }
            reader.close()
            return String(decoding: answer, as: UTF8.self)
        }
        #expect(answer == "HELLO, STREAMS")
        // The client may see the server's end before the server's loop has reported its close.
        #expect(server.closed.wait())
        let seen = events.values
        #expect(seen.first { $0.hasPrefix("in ") } == "in open")
        #expect(seen.first { $0.hasPrefix("out ") } == "out open")
        #expect(seen.contains("in end"))
        #expect(server.events.values.last == .closed(nil))
    }
}
