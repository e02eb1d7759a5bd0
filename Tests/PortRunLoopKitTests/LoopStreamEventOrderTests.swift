import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// The order of a stream pair's events against real peers, as Apple documents it: open is
/// asynchronous (`.opening`, then `.open` with `.openCompleted`), then `.hasSpaceAvailable` to the
/// output, `.hasBytesAvailable` to the input when bytes are buffered, `.endEncountered` (status
/// `.atEnd`) once the peer's end is read.
@Suite(.timeLimit(.minutes(1))) struct LoopStreamEventOrderTests {
    @Test func openCompletedThenSpaceThenBytesAgainstAnEchoServer() throws {
        let server = try StreamTestServer()
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            let (reader, writer) = streamPair(toPort: port)
            let recorder = StreamEventRecorder(loop: loop)
            var problems: [String] = []
            for stream in [reader, writer] as [LoopStream] {
                stream.delegate = recorder
                stream.schedule(in: loop, forMode: .default)
                if stream.streamStatus != .notOpen { problems.append("status before open: \(stream.streamStatus)") }
                stream.open()
                if stream.streamStatus != .opening { problems.append("status after open: \(stream.streamStatus)") }
            }
            if !recorder.input.isEmpty || !recorder.output.isEmpty { problems.append("an event inside open()") }
            recorder.reaction = { recorder, stream, event in
                if stream === writer, event == .hasSpaceAvailable, recorder.count("space", in: recorder.output) == 1 {
                    if writeSome(writer, Array("hello".utf8)) != 5 { problems.append("write did not take 5 bytes") }
                }
            }
            guard runLoop(loop, until: { recorder.input.contains("bytes") }) else { return ["timed out"] + recorder.input }
            if reader.streamStatus != .open || writer.streamStatus != .open { problems.append("not open after openCompleted") }
            if reader.remoteEndpoint?.port != port { problems.append("remote endpoint \(String(describing: reader.remoteEndpoint))") }
            let echoed = readAll(reader)
            if echoed != Array("hello".utf8) { problems.append("echoed \(echoed)") }
            reader.close()
            writer.close()
            return problems + ["in: " + recorder.input.joined(separator: ","), "out: " + recorder.output.prefix(2).joined(separator: ",")]
        }
        #expect(result == ["in: open,bytes", "out: open,space"])
    }

    @Test func endEncounteredOnceThePeersBytesAreRead() throws {
        // The server says "bye" and closes: the input has bytes, then, once they are read, its end.
        let server = try StreamTestServer { connection in
            connection.write("bye")
            connection.close(afterFlushing: true)
        }
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            var input: LoopInputStream?
            var output: LoopOutputStream?
            LoopStream.getStreamsToHost(withName: "127.0.0.1", port: port, inputStream: &input, outputStream: &output)
            let reader = input!
            let recorder = StreamEventRecorder(loop: loop)
            reader.delegate = recorder
            reader.schedule(in: loop, forMode: .default)
            reader.open()
            var read: [UInt8] = []
            var afterEnd: [String] = []
            recorder.reaction = { _, _, event in
                if event == .hasBytesAvailable { read += readAll(reader) }
                if event == .endEncountered {
                    var byte: UInt8 = 0
                    afterEnd = ["\(reader.streamStatus == .atEnd)", "\(reader.read(&byte, maxLength: 1))", "\(reader.hasBytesAvailable)"]
                }
            }
            guard runLoop(loop, until: { recorder.input.contains("end") }) else { return ["timed out"] + recorder.input }
            runTurns(loop, mode: .default)
            reader.close()
            output = nil
            return recorder.input + [String(decoding: read, as: UTF8.self)] + afterEnd
        }
        #expect(result == ["open", "bytes", "end", "bye", "true", "0", "false"])
    }

    @Test func theOutputOpensAfterTheInputOnAnEstablishedConnection() throws {
        // The first stream to open makes the connection; the second opens on it later, and still
        // gets `.openCompleted` before `.hasSpaceAvailable`, on a later turn (never inside open()).
        let server = try StreamTestServer()
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            var input: LoopInputStream?
            var output: LoopOutputStream?
            LoopStream.getStreams(to: .host("127.0.0.1", port: port), inputStream: &input, outputStream: &output)
            let (reader, writer) = (input!, output!)
            let recorder = StreamEventRecorder(loop: loop)
            reader.delegate = recorder
            writer.delegate = recorder
            reader.schedule(in: loop, forMode: .default)
            writer.schedule(in: loop, forMode: .default)
            reader.open()
            guard runLoop(loop, until: { recorder.input == ["open"] }) else { return ["timed out"] }
            let before = writer.streamStatus
            writer.open()
            let during = recorder.output
            guard runLoop(loop, until: { recorder.output.count >= 2 }) else { return ["timed out"] + recorder.output }
            return ["\(before == .notOpen)", "\(during.isEmpty)"] + recorder.output
        }
        #expect(result == ["true", "true", "open", "space"])
    }

    @Test(.enabled(if: executablePath("python3") != nil, "python3 is not installed"))
    func aPeerInAnotherProcessHalfCloses() throws {
        // A second real process (python3): it reads until our output's end, answers with the
        // bytes reversed, and closes. Skipped only where python3 is not installed.
        let python = try #require(executablePath("python3"))
        let script = """
        import socket
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
        print("PORT", s.getsockname()[1], "END", flush=True)
        c, _ = s.accept()
        data = b""
        while True:
            chunk = c.recv(65536)
            if not chunk: break
            data += chunk
        c.sendall(data[::-1]); c.close()
        """
        let peer = try StreamingProcess(python, ["-c", script])
        defer { peer.stop() }
        #expect(peer.wait(for: "END"))
        let words = peer.output.split(separator: " ")
        let port = try #require(words.firstIndex(of: "PORT").flatMap { Int(words[$0 + 1]) })
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            let (reader, writer) = streamPair(toPort: port)
            let recorder = StreamEventRecorder(loop: loop)
            var read: [UInt8] = []
            recorder.reaction = { _, stream, event in
                if stream === writer, event == .hasSpaceAvailable {
                    _ = writeSome(writer, Array("stream pair".utf8))
                    writer.close() // half-close: the peer reads its end, the input stays open
                }
                if event == .hasBytesAvailable { read += readAll(reader) }
            }
            for stream in [reader, writer] as [LoopStream] {
                stream.delegate = recorder
                stream.schedule(in: loop, forMode: .common)
                stream.open()
            }
            guard runLoop(loop, until: { recorder.input.contains("end") }) else { return ["timed out"] + recorder.input }
            reader.close()
            return recorder.input + recorder.output + [String(decoding: read, as: UTF8.self)]
        }
        #expect(result == ["open", "bytes", "end", "open", "space", "riap maerts"])
    }
}
