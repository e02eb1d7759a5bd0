import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Closing one stream of a pair closes its own direction: the output's close is a half-close
/// (the peer reads its end, the input reads on), the input's stops reading (the output writes
/// on); closing or letting go of both closes the connection.
@Suite(.timeLimit(.minutes(1))) struct LoopStreamCloseTests {
    @Test func closingTheOutputHalfClosesAndTheInputReadsOn() throws {
        // The server keeps its side open after our end, answers "after", then ends its own output.
        var options = StreamListener.Options()
        options.connection.allowsHalfClosure = true
        let received = Recorder<UInt8>()
        let server = try StreamTestServer(options: options) { connection in
            connection.onRead = { _, bytes in for byte in bytes { received.append(byte) } }
            connection.onEvent = { connection, event in
                if event == .inputEnded {
                    connection.write("after")
                    connection.shutdownOutput()
                }
            }
        }
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            let (reader, writer) = streamPair(toPort: port)
            let recorder = StreamEventRecorder(loop: loop)
            var read: [UInt8] = []
            var afterClose = ""
            recorder.reaction = { _, stream, event in
                if stream === writer, event == .hasSpaceAvailable {
                    _ = writeSome(writer, Array("abc".utf8))
                    writer.close()
                    var byte: UInt8 = 0
                    afterClose = "write \(writer.write(&byte, maxLength: 1)) closed \(writer.streamStatus == .closed) input \(reader.streamStatus == .open)"
                }
                if event == .hasBytesAvailable { read += readAll(reader) }
            }
            for stream in [reader, writer] as [LoopStream] {
                stream.delegate = recorder
                stream.schedule(in: loop, forMode: .default)
                stream.open()
            }
            guard runLoop(loop, until: { recorder.input.contains("end") }) else { return ["no end"] + recorder.input }
            // Both directions ended: the connection closed by itself.
            let closedAtBothEnds = reader.remoteEndpoint == nil
            reader.close()
            return [afterClose, String(decoding: read, as: UTF8.self), recorder.input.joined(separator: ","),
                    recorder.output.joined(separator: ","), "\(closedAtBothEnds)"]
        }
        #expect(result == ["write -1 closed true input true", "after", "open,bytes,end", "open,space", "true"])
        #expect(received.values == Array("abc".utf8))
        // The client may see the server's end before the server's loop has reported its close.
        #expect(server.closed.wait())
        #expect(server.events.values == [.inputEnded, .outputShutDown, .closed(nil)])
    }

    @Test func closingTheInputLeavesTheOutputWriting() throws {
        let received = Recorder<UInt8>()
        let server = try StreamTestServer { connection in
            connection.onRead = { _, bytes in for byte in bytes { received.append(byte) } }
        }
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            let (reader, writer) = streamPair(toPort: port)
            reader.open()
            writer.open()
            guard runLoop(loop, until: { writer.hasSpaceAvailable }) else { return ["never open"] }
            reader.close()
            var byte: UInt8 = 0
            let readAfterClose = reader.read(&byte, maxLength: 1)
            _ = writeSome(writer, Array("x".utf8))
            guard runLoop(loop, until: { received.count == 1 }) else { return ["not received"] }
            let serverEventsWhileOpen = server.events.count
            writer.close()
            guard runLoop(loop, until: { server.events.count == 2 }) else { return ["server saw no end"] }
            return ["read \(readAfterClose)", "\(serverEventsWhileOpen)", "\(writer.remoteEndpoint == nil)"]
        }
        #expect(result == ["read -1", "0", "true"])
        #expect(server.events.values == [.inputEnded, .closed(nil)])
    }

    @Test func lettingGoOfBothStreamsClosesTheConnection() throws {
        let server = try StreamTestServer()
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> Bool in
            let loop = PortRunLoop.current
            var input: LoopInputStream?
            var output: LoopOutputStream?
            LoopStream.getStreamsToHost(withName: "127.0.0.1", port: port, inputStream: &input, outputStream: &output)
            input!.open()
            output!.open()
            guard runLoop(loop, until: { output!.hasSpaceAvailable }) else { return false }
            input = nil
            output = nil
            return runLoop(loop, until: { server.events.values.contains(.closed(nil)) })
        }
        #expect(result)
        #expect(server.events.values == [.inputEnded, .closed(nil)])
    }
}
