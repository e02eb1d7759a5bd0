import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Reading and writing a stream pair: `.hasBytesAvailable` is not sent again until the client
/// reads, `.hasSpaceAvailable` not until it writes; what read and write return in each state; a
/// megabyte through `write(_:maxLength:)` paced by `.hasSpaceAvailable`.
@Suite(.timeLimit(.minutes(1))) struct LoopStreamReadWriteTests {
    @Test func aDelegateThatDoesNotReadIsNotCalledAgainUntilItReads() throws {
        // The server writes when told; the client's delegate only records.
        let server = try StreamTestServer { _ in }
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
            guard runLoop(loop, until: { recorder.input == ["open"] }), server.accepted.wait() else { return ["no connection"] }
            var log: [String] = []
            func bytesEvents() -> String { "\(recorder.count("bytes", in: recorder.input))" }
            try? server.onServer { $0.write("a") }
            guard runLoop(loop, until: { recorder.input.contains("bytes") }) else { return ["no bytes event"] }
            try? server.onServer { $0.write("b") }
            guard runLoop(loop, until: { reader.bufferedByteCount == 2 }) else { return ["second byte not read"] }
            runTurns(loop, mode: .default)
            log.append("unread: \(bytesEvents())")
            var byte: UInt8 = 0
            log.append("read \(reader.read(&byte, maxLength: 1))")
            guard runLoop(loop, until: { recorder.count("bytes", in: recorder.input) == 2 }) else { return log + ["not told again"] }
            log.append("after a partial read: \(bytesEvents())")
            log.append("read \(reader.read(&byte, maxLength: 1))")
            runTurns(loop, mode: .default)
            log.append("drained: \(bytesEvents())")
            try? server.onServer { $0.write("c") }
            guard runLoop(loop, until: { recorder.count("bytes", in: recorder.input) == 3 }) else { return log + ["new bytes not told"] }
            log.append("new bytes: \(bytesEvents())")
            reader.close()
            output = nil
            return log
        }
        #expect(result == ["unread: 1", "read 1", "after a partial read: 2", "read 1", "drained: 2", "new bytes: 3"])
    }

    @Test func aWriterThatDoesNotWriteIsNotToldOfSpaceAgainUntilItWrites() throws {
        let server = try StreamTestServer()
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            var input: LoopInputStream?
            var output: LoopOutputStream?
            LoopStream.getStreamsToHost(withName: "127.0.0.1", port: port, inputStream: &input, outputStream: &output)
            let writer = output!
            let recorder = StreamEventRecorder(loop: loop)
            writer.delegate = recorder
            writer.schedule(in: loop, forMode: .default)
            writer.open()
            guard runLoop(loop, until: { recorder.output == ["open", "space"] }) else { return ["never open"] + recorder.output }
            runTurns(loop, mode: .default, 5)
            var log = ["idle: " + recorder.output.joined(separator: ",")]
            log.append("wrote \(writeSome(writer, [1, 2, 3]))")
            guard runLoop(loop, until: { recorder.output.count == 3 }) else { return log + ["not told again"] }
            runTurns(loop, mode: .default, 5)
            log.append("after a write: " + recorder.output.joined(separator: ","))
            writer.close()
            input = nil
            return log
        }
        #expect(result == ["idle: open,space", "wrote 3", "after a write: open,space,space"])
    }

    @Test func readAndWriteReturnCodesInEachState() throws {
        let server = try StreamTestServer()
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            let (reader, writer) = streamPair(toPort: port)
            var byte: UInt8 = 7
            var codes: [String] = []
            func note(_ label: String) {
                codes.append("\(label): read \(reader.read(&byte, maxLength: 1)) write \(writer.write(&byte, maxLength: 1))")
            }
            note("not open")
            reader.open()
            writer.open()
            note("opening")
            guard runLoop(loop, until: { writer.hasSpaceAvailable }) else { return ["never open"] }
            note("open")
            guard runLoop(loop, until: { reader.hasBytesAvailable }) else { return codes + ["no echo"] }
            note("echoed")
            reader.close()
            writer.close()
            note("closed")
            codes.append("status \(reader.streamStatus == .closed) \(writer.streamStatus == .closed)")
            return codes
        }
        #expect(result == ["not open: read -1 write -1", "opening: read 0 write 0", "open: read 0 write 1",
                           "echoed: read 1 write 1", "closed: read -1 write -1", "status true true"])
    }

    @Test func aMegabyteThroughWriteMaxLengthPacedBySpaceAvailable() throws {
        // The server reads nothing until told, so the client's queue fills and the output has no
        // space; then it echoes everything, and the client reads it all back.
        var serverOptions = StreamListener.Options()
        serverOptions.connection.receiveBufferSize = 16 * 1024
        let server = try StreamTestServer(options: serverOptions) { connection in
            connection.pauseReading()
            connection.onRead = { connection, bytes in connection.write(bytes) }
        }
        defer { server.stop() }
        let port = server.port
        let total = 1 << 20
        let sent = (0..<total).map { UInt8(truncatingIfNeeded: $0 % 251) }
        struct Outcome: Sendable, Equatable {
            var echoedMatches = false
            var sawNoSpace = false
            var zeroWithoutSpace = -2
            var failedWrites = 0
            var queueBounded = true
        }
        let outcome = try onFreshThread { () -> Outcome in
            let loop = PortRunLoop.current
            var input: LoopInputStream?
            var output: LoopOutputStream?
            var options = StreamConnection.Options()
            options.sendBufferSize = 16 * 1024
            LoopStream.getStreams(to: .host("127.0.0.1", port: port), options: options, inputStream: &input, outputStream: &output)
            let (reader, writer) = (input!, output!)
            let recorder = StreamEventRecorder(loop: loop)
            var outcome = Outcome()
            var offset = 0
            var received: [UInt8] = []
            received.reserveCapacity(total)
            recorder.reaction = { _, stream, event in
                if event == .hasBytesAvailable { received += readAll(reader) }
                guard stream === writer, event == .hasSpaceAvailable else { return }
                guard offset < total else { return }
                let count = sent.withUnsafeBufferPointer { writer.write($0.baseAddress! + offset, maxLength: total - offset) }
                guard count > 0 else { outcome.failedWrites += 1; return }
                offset += count
                if writer.queuedByteCount > 2 * options.highWaterMark { outcome.queueBounded = false }
                if !writer.hasSpaceAvailable, !outcome.sawNoSpace {
                    outcome.sawNoSpace = true
                    var byte: UInt8 = 0
                    outcome.zeroWithoutSpace = writer.write(&byte, maxLength: 1)
                }
            }
            for stream in [reader, writer] as [LoopStream] {
                stream.delegate = recorder
                stream.schedule(in: loop, forMode: .default)
                stream.open()
            }
            // The kernel completes the connection before the server accepts it: bytes can fill
            // the buffers first.
            guard runLoop(loop, seconds: 20, until: { outcome.sawNoSpace }), server.accepted.wait() else { return outcome }
            try? server.onServer { $0.resumeReading() }
            guard runLoop(loop, seconds: 30, until: { received.count >= total }) else { return outcome }
            outcome.echoedMatches = received == sent
            reader.close()
            writer.close()
            return outcome
        }
        #expect(outcome == Outcome(echoedMatches: true, sawNoSpace: true, zeroWithoutSpace: 0, failedWrites: 0,
                                   queueBounded: true))
    }
}
