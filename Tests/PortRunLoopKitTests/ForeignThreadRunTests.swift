import Foundation
import PortRunLoopKit
import Testing

/// A loop runs only on its own thread: anything else is a precondition failure that says so.
@Suite struct ForeignThreadRunTests {
    @Test func runningALoopFromAnotherThreadTrapsWithAClearMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "owner")
            _ = thread.loop.run(mode: .default, before: Date())
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("must be made on the loop's own thread ('owner')"))
    }

    @Test func runFromAnotherThreadTrapsToo() async {
        await #expect(processExitsWith: .failure) {
            let thread = try RunLoopThread(name: "owner")
            thread.loop.run()
        }
    }

    @Test func schedulingOnePortInTwoLoopsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let a = try RunLoopThread(name: "a")
            let b = try RunLoopThread(name: "b")
            let port = MessagePort()
            a.loop.add(port, forMode: .common)
            b.loop.add(port, forMode: .common)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("already scheduled in another PortRunLoop ('a')"))
    }
}
