import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `stop()` sent while the loop's thread waits inside `performAndWait` to another loop ends the
/// user's run once the call completes; it is not used up by the library's private wait.
@Suite(.timeLimit(.minutes(1))) struct StopDuringSynchronousWaitTests {
    @Test func aStopFromAnotherThreadDuringPerformAndWaitEndsTheUsersRun() throws {
        let other = try RunLoopThread(name: "stop-target")
        defer { other.stop() }
        let loopBox = Locked<PortRunLoop?>(nil)
        let waiting = Signal()
        let release = Signal()
        let returned = Signal()
        let callResult = Locked<Int?>(nil)
        let thread = Thread {
            let loop = PortRunLoop.current
            loopBox.withLock { $0 = loop }
            loop.add(MessagePort(), forMode: .default) // the mode is never empty: only stop() ends run()
            loop.perform {
                let value = try? other.loop.performAndWait { () -> Int in
                    waiting.fire()
                    _ = release.wait()
                    return 7
                }
                callResult.withLock { $0 = value }
            }
            loop.run()
            returned.fire()
        }
        thread.start()
        #expect(waiting.wait()) // the loop's thread is inside performAndWait
        loopBox.withLock { $0 }!.stop()
        release.fire()
        #expect(returned.wait(seconds: 10), "run() did not return after stop()")
        #expect(callResult.withLock { $0 } == 7) // the call itself still completed
    }

    @Test func aStopOnTheLoopsThreadInsideANestedWaitEndsTheUsersRun() throws {
        let other = try RunLoopThread(name: "stop-target-2")
        defer { other.stop() }
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            // Another loop's call made to this thread while it waits: it stops this loop from inside
            // the private wait.
            loop.perform {
                _ = try? other.loop.performAndWait {
                    try? loop.performAndWait { loop.stop() }
                }
            }
            let result = loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: false)
            #expect(result == .stopped)
        }
    }
}
