import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A stream pair that fails: `.errorOccurred` with ``LoopStream/streamError`` set (a
/// ``StreamConnectionError``) and status `.error`, nothing after it, and -1 from read and write.
@Suite(.timeLimit(.minutes(1))) struct LoopStreamErrorTests {
    /// Opens a pair to `endpoint`, scheduled in the default mode, and runs until both failed;
    /// returns each stream's events, status, error, and what read and write return.
    private func failure(to endpoint: SocketEndpoint) throws -> [String] {
        try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            var input: LoopInputStream?
            var output: LoopOutputStream?
            LoopStream.getStreams(to: endpoint, timeout: 10, inputStream: &input, outputStream: &output)
            let (reader, writer) = (input!, output!)
            let recorder = StreamEventRecorder(loop: loop)
            for stream in [reader, writer] as [LoopStream] {
                stream.delegate = recorder
                stream.schedule(in: loop, forMode: .default)
                stream.open()
            }
            guard runLoop(loop, until: { recorder.input.contains("error") && recorder.output.contains("error") }) else {
                return ["no error"] + recorder.input + recorder.output
            }
            runTurns(loop, mode: .default)
            var byte: UInt8 = 0
            let reads = reader.read(&byte, maxLength: 1)
            let writes = writer.write(&byte, maxLength: 1)
            let errors = [reader.streamError, writer.streamError].map { $0.map { "\($0)" } ?? "nil" }
            return recorder.input + recorder.output + ["\(reader.streamStatus == .error) \(writer.streamStatus == .error)",
                                                       "read \(reads) write \(writes)"] + errors
        }
    }

    @Test func aRefusedConnectionIsAnErrorOnBothStreams() throws {
        // A port that was just listened on and closed: nothing listens there now.
        let server = try StreamTestServer()
        let endpoint = SocketEndpoint.host("127.0.0.1", port: server.port)
        server.stop()
        let expected = "\(StreamConnectionError.connectionRefused(endpoint))"
        #expect(try failure(to: endpoint) == ["error", "error", "true true", "read -1 write -1", expected, expected])
    }

    @Test func aMissingUnixSocketIsRefused() throws {
        let endpoint = SocketEndpoint.unix(path: NSTemporaryDirectory() + "prl-stream-none-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock")
        let expected = "\(StreamConnectionError.connectionRefused(endpoint))"
        #expect(try failure(to: endpoint) == ["error", "error", "true true", "read -1 write -1", expected, expected])
    }

    @Test func anInvalidEndpointIsAnErrorWhenOpened() throws {
        let result = try failure(to: .host("127.0.0.1", port: 70_000))
        #expect(result.prefix(4) == ["error", "error", "true true", "read -1 write -1"])
        #expect(result.last?.hasPrefix("invalid endpoint") == true)
    }

    @Test func aPeerThatResetsFailsTheOutputAfterTheInputsEnd() throws {
        // The server closes at once; the client writes until the reset comes back. The input had
        // already read its end, so only the output fails.
        let server = try StreamTestServer { connection in connection.close() }
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            let (reader, writer) = streamPair(toPort: port)
            let recorder = StreamEventRecorder(loop: loop)
            let chunk = [UInt8](repeating: 1, count: 1024)
            recorder.reaction = { recorder, stream, event in
                if stream === writer, event == .hasSpaceAvailable, recorder.input.contains("end") { _ = writeSome(writer, chunk) }
                if stream === reader, event == .endEncountered, writer.hasSpaceAvailable { _ = writeSome(writer, chunk) }
            }
            for stream in [reader, writer] as [LoopStream] {
                stream.delegate = recorder
                stream.schedule(in: loop, forMode: .default)
                stream.open()
            }
            guard runLoop(loop, until: { recorder.output.contains("error") }) else { return ["no error"] + recorder.input + recorder.output }
            runTurns(loop, mode: .default)
            return recorder.input + [recorder.output.first ?? "", recorder.output.last ?? "",
                                     "\(reader.streamStatus == .atEnd) \(writer.streamStatus == .error)",
                                     writer.streamError.map { "\($0)" } ?? "nil"]
        }
        #expect(result == ["open", "end", "open", "error", "true true", "\(StreamConnectionError.peerReset)"])
    }
}
