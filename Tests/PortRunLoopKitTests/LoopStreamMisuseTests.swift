import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A stream used off its loop's thread, or a pair split over two loops, traps with a message that
/// names the call and the loop.
@Suite struct LoopStreamMisuseTests {
    @Test func aStreamUsedOffItsLoopsThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "stream-owner")
            var input: LoopInputStream?
            var output: LoopOutputStream?
            LoopStream.getStreamsToHost(withName: "127.0.0.1", port: 9, inputStream: &input, outputStream: &output)
            let stream = HandedOver(input!)
            try thread.loop.performAndWait { stream.value.schedule(in: thread.loop, forMode: .default) }
            _ = stream.value.streamStatus
        }
        expectMessage(result, contains: "LoopStream.streamStatus must be made on the loop's own thread ('stream-owner')")
    }

    @Test func thePairsStreamsInTwoLoopsTrap() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "other-loop")
            var input: LoopInputStream?
            var output: LoopOutputStream?
            LoopStream.getStreamsToHost(withName: "127.0.0.1", port: 9, inputStream: &input, outputStream: &output)
            input!.schedule(in: PortRunLoop.current, forMode: .default)
            let writer = HandedOver(output!)
            try thread.loop.performAndWait { writer.value.schedule(in: thread.loop, forMode: .default) }
        }
        expectMessage(result, contains: "the streams of a pair belong to one loop")
    }
}
