import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `getBoundStreams(withBufferSize:)`: what is written to the output is read from the input, in
/// order, paced by the buffer size; the output's close is the input's end; the two streams may
/// live on two threads.
@Suite(.timeLimit(.minutes(1))) struct LoopStreamBoundPairTests {
    static let payload = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    @Test func bytesWrittenToTheOutputAreReadFromTheInputThenItsEnd() throws {
        let result = try onFreshThread { () -> [String] in
            let loop = PortRunLoop.current
            var input: LoopInputStream?
            var output: LoopOutputStream?
            LoopStream.getBoundStreams(withBufferSize: 4096, inputStream: &input, outputStream: &output)
            let (reader, writer) = (input!, output!)
            let recorder = StreamEventRecorder(loop: loop)
            let payload = Self.payload
            var offset = 0
            var read: [UInt8] = []
            var sawNoSpace = false
            recorder.reaction = { _, stream, event in
                if event == .hasBytesAvailable { read += readAll(reader) }
                guard stream === writer, event == .hasSpaceAvailable, offset < payload.count else { return }
                offset += payload.withUnsafeBufferPointer { writer.write($0.baseAddress! + offset, maxLength: payload.count - offset) }
                if !writer.hasSpaceAvailable { sawNoSpace = true }
                if offset == payload.count { writer.close() }
            }
            for stream in [reader, writer] as [LoopStream] {
                stream.delegate = recorder
                stream.schedule(in: loop, forMode: .default)
                stream.open()
            }
            guard runLoop(loop, seconds: 30, until: { recorder.input.contains("end") }) else { return ["no end", "\(read.count)"] }
            reader.close()
            let events = recorder.input
            return [events.first ?? "", events.last ?? "", "\(events.filter { $0 != "bytes" }.count)", "\(read == payload)", "\(sawNoSpace)"]
        }
        #expect(result == ["open", "end", "2", "true", "true"])
    }

    @Test func aProducerThreadWritesAndAConsumerThreadReads() throws {
        var input: LoopInputStream?
        var output: LoopOutputStream?
        LoopStream.getBoundStreams(withBufferSize: 8192, inputStream: &input, outputStream: &output)
        let reading = HandedOver(input!)
        let writing = HandedOver(output!)
        input = nil
        output = nil
        let producer = try RunLoopThread(name: "bound-producer")
        defer { producer.stop() }
        // The producer writes the payload as space comes, then closes its stream.
        final class Producer: LoopStreamDelegate {
            var offset = 0
            func stream(_ stream: LoopStream, handle event: Stream.Event) {
                guard event == .hasSpaceAvailable, let writer = stream as? LoopOutputStream else { return }
                let payload = LoopStreamBoundPairTests.payload
                offset += payload.withUnsafeBufferPointer { writer.write($0.baseAddress! + offset, maxLength: payload.count - offset) }
                if offset == payload.count { writer.close() }
            }
        }
        let producerDelegate = HandedOver(Producer())
        try producer.loop.performAndWait {
            writing.value.delegate = producerDelegate.value
            writing.value.schedule(in: producer.loop, forMode: .default)
            writing.value.open()
        }
        let read = try onFreshThread { () -> [UInt8] in
            let loop = PortRunLoop.current
            let reader = reading.value
            reader.schedule(in: loop, forMode: .default)
            reader.open()
            var read: [UInt8] = []
            runLoop(loop, seconds: 30, until: {
                read += readAll(reader)
                return reader.streamStatus == .atEnd
            })
            reader.close()
            return read
        }
        #expect(read == Self.payload)
        try producer.loop.performAndWait { #expect(writing.value.streamStatus == .closed) }
    }
}
