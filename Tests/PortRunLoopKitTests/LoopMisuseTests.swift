import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing
import PortRunLoopTestSupport

/// Misuse of a loop's run/stop API: bad dates and timeouts, stop() on loops that are
/// not running or are dead. (Running a loop from a foreign thread is covered by the core tests.)
@Suite(.timeLimit(.minutes(1))) struct LoopMisuseTests {
    @Test func runUntilANaNDateIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            PortRunLoop.current.run(until: Date(timeIntervalSinceReferenceDate: .nan))
        }
        expectMessage(result, contains: "date is NaN")
    }

    @Test func runBeforeANaNDateIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PortRunLoop.current.run(mode: .default, before: Date(timeIntervalSinceReferenceDate: .nan))
        }
        expectMessage(result, contains: "date is NaN")
    }

    @Test func aNaNRunTimeoutIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PortRunLoop.current.run(mode: .default, timeout: .nan, returnAfterSourceHandled: false)
        }
        expectMessage(result, contains: "timeout is NaN")
    }

    @Test func negativeAndInfiniteTimeoutsAreAPollAndForever() throws {
        try onLoopThread { c in
            let loop = PortRunLoop.current
            let port = MessagePort()
            loop.add(port, forMode: .default)
            // Negative: polls once, nothing ready → timed out at once.
            c.expect(loop.run(mode: .default, timeout: -1, returnAfterSourceHandled: false) == .timedOut)
            c.expect(loop.run(mode: .default, timeout: -.infinity, returnAfterSourceHandled: true) == .timedOut)
            // Infinite: waits until something happens; a message from another thread ends it.
            let sender = JoinableThread(name: "sender") { _ = port.send(before: .distantFuture) }
            port.setHandler { _ in }
            c.expect(loop.run(mode: .default, timeout: .infinity, returnAfterSourceHandled: true) == .handledSource)
            sender.join()
            // A date in the distant past polls, like a zero timeout.
            c.expect(loop.run(mode: .default, before: .distantPast))
            c.expect(loop.run(mode: .default, before: Date(timeIntervalSinceReferenceDate: -.infinity)))
            port.invalidate()
        }
    }

    @Test func stopOnADeadLoopIsANoOp() throws {
        let thread = try RunLoopThread(name: "dead-stop")
        let loop = thread.loop
        thread.stop()
        loop.stop()
        loop.wakeUp()
        thread.stop() // idempotent
        #expect(loop.isShutDown)
        #expect(!loop.perform {})
    }

    @Test func stopOnAnIdleRunLoopThreadOnlyRestartsItsRun() throws {
        // A RunLoopThread restarts its run when stopped with loop.stop(): it keeps serving.
        let thread = try RunLoopThread(name: "restart")
        defer { thread.stop() }
        for i in 0..<50 {
            thread.loop.stop()
            #expect(try thread.loop.performAndWait { i } == i)
        }
        #expect(!thread.loop.isShutDown)
    }

    @Test func emptyModeListForPerformIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PortRunLoop.main.perform(inModes: []) {}
        }
        expectMessage(result, contains: "mode list is empty")
    }

    @Test func commonIsNotACommonMode() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            PortRunLoop.main.addCommonMode(.common)
        }
        expectMessage(result, contains: ".common cannot be one of the common modes")
    }
}
