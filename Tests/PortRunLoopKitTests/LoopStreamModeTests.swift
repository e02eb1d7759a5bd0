import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Where a stream's events go: only to runs of the modes it is scheduled in, on its loop's
/// thread; `remove(from:forMode:)` stops them (and scheduling again delivers what waited); an
/// unscheduled stream gets none and is polled.
@Suite(.timeLimit(.minutes(1))) struct LoopStreamModeTests {
    static let inputMode = RunLoop.Mode("LoopStreamModeTests.input")
    static let outputMode = RunLoop.Mode("LoopStreamModeTests.output")

    @Test func eventsReachTheDelegateOnlyInRunsOfTheScheduledModes() throws {
        // The input is scheduled in one mode, the output in another; the socket is served in both.
        // Runs of the output's mode connect, write and read the echo, and tell the output only;
        // the input's events wait for a run of its own mode.
        let server = try StreamTestServer()
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            let (reader, writer) = streamPair(toPort: port)
            let recorder = StreamEventRecorder(loop: loop)
            recorder.reaction = { recorder, stream, event in
                if stream === writer, event == .hasSpaceAvailable, recorder.count("space", in: recorder.output) == 1 {
                    _ = writeSome(writer, Array("ping".utf8))
                }
            }
            reader.delegate = recorder
            writer.delegate = recorder
            reader.schedule(in: loop, forMode: Self.inputMode)
            writer.schedule(in: loop, forMode: Self.outputMode)
            reader.open()
            writer.open()
            guard runLoop(loop, mode: Self.outputMode, until: { reader.hasBytesAvailable }) else { return ["no echo"] + recorder.output }
            runTurns(loop, mode: Self.outputMode)
            runTurns(loop, mode: .default)
            var log = ["other modes: in [\(recorder.input.joined(separator: ","))] out [\(recorder.output.prefix(2).joined(separator: ","))]"]
            guard runLoop(loop, mode: Self.inputMode, until: { recorder.input.count == 2 }) else { return log + ["input never told"] }
            log.append("input's mode: in [\(recorder.input.joined(separator: ","))]")
            reader.close()
            writer.close()
            return log
        }
        #expect(result == ["other modes: in [] out [open,space]", "input's mode: in [open,bytes]"])
    }

    @Test func removeStopsEventsAndSchedulingAgainDeliversWhatWaited() throws {
        let server = try StreamTestServer()
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            let mode = Self.inputMode
            let (reader, writer) = streamPair(toPort: port)
            let recorder = StreamEventRecorder(loop: loop)
            for stream in [reader, writer] as [LoopStream] {
                stream.delegate = recorder
                stream.schedule(in: loop, forMode: mode)
                stream.open()
            }
            guard runLoop(loop, mode: mode, until: { recorder.input == ["open"] && recorder.output == ["open", "space"] }) else {
                return ["never open"]
            }
            reader.remove(from: loop, forMode: mode)
            reader.remove(from: loop, forMode: mode) // not scheduled there any more: nothing happens
            _ = writeSome(writer, Array("ping".utf8))
            guard runLoop(loop, mode: mode, until: { reader.hasBytesAvailable }) else { return ["no echo"] }
            runTurns(loop, mode: mode)
            var log = ["removed: " + recorder.input.joined(separator: ",")]
            reader.schedule(in: loop, forMode: mode)
            guard runLoop(loop, mode: mode, until: { recorder.input.count == 2 }) else { return log + ["not told after scheduling"] }
            log.append("scheduled again: " + recorder.input.joined(separator: ","))
            reader.close()
            writer.close()
            return log
        }
        #expect(result == ["removed: open", "scheduled again: open,bytes"])
    }

    @Test func anUnscheduledPairGetsNoEventsAndIsPolled() throws {
        // Cocoa's polling style: no schedule; the pair binds to the thread's loop at open and is
        // served in its common modes while the thread runs it.
        let server = try StreamTestServer()
        defer { server.stop() }
        let port = server.port
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            let (reader, writer) = streamPair(toPort: port)
            let recorder = StreamEventRecorder(loop: loop)
            reader.delegate = recorder
            writer.delegate = recorder
            reader.open()
            writer.open()
            guard runLoop(loop, until: { writer.hasSpaceAvailable }) else { return ["never open"] }
            _ = writeSome(writer, Array("poll".utf8))
            guard runLoop(loop, until: { reader.hasBytesAvailable }) else { return ["no echo"] }
            runTurns(loop, mode: .default)
            let echoed = String(decoding: readAll(reader), as: UTF8.self)
            reader.close()
            writer.close()
            return [echoed, "events: \(recorder.input.count + recorder.output.count)"]
        }
        #expect(result == ["poll", "events: 0"])
    }
}
