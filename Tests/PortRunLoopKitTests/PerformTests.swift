import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// perform(inModes:_:): wakes a sleeping loop, FIFO per caller, honours modes.
@Suite(.timeLimit(.minutes(1))) struct PerformTests {
    @Test func performWakesASleepingLoop() throws {
        let thread = try RunLoopThread(name: "idle")
        defer { thread.stop() }
        try thread.loop.performAndWait {} // the loop has drained and goes back to sleep
        let ran = Signal()
        #expect(thread.loop.perform { ran.fire() })
        #expect(ran.wait(), "corelibs' RunLoop.perform never wakes an idle loop; ours must")
    }

    @Test func blocksFromOneThreadRunInOrder() throws {
        let thread = try RunLoopThread(name: "fifo")
        defer { thread.stop() }
        let seen = Recorder<Int>()
        for i in 0..<10_000 { thread.loop.perform { seen.append(i) } }
        try thread.loop.performAndWait {}
        #expect(seen.values == Array(0..<10_000))
    }

    @Test func blocksWaitForTheirMode() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let modal = RunLoop.Mode("modal")
            let seen = Recorder<String>()
            loop.perform(inModes: [modal]) { seen.append("modal") }
            loop.perform(inModes: [.default]) { seen.append("default") }
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(seen.values == ["default"])
            #expect(loop.run(mode: modal, before: Date(timeIntervalSinceNow: 5)))
            #expect(seen.values == ["default", "modal"])
        }
    }

    @Test func performOnTheOwnThreadRunsOnALaterTurn() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let seen = Recorder<Int>()
            loop.perform {
                seen.append(1)
                loop.perform { seen.append(3) }
                seen.append(2)
            }
            while seen.count < 3 { #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5))) }
            #expect(seen.values == [1, 2, 3])
        }
    }
}
