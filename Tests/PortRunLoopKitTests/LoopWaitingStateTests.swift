import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// isWaiting (CFRunLoopIsWaiting): true, seen from another thread, while the loop sleeps; false
/// while it handles something.
@Suite(.timeLimit(.minutes(1))) struct LoopWaitingStateTests {
    @Test func trueWhileTheLoopSleepsAndFalseWhileItRunsAHandler() throws {
        let thread = try RunLoopThread(name: "waiting-state")
        defer { thread.stop() }
        let loop = thread.loop
        #expect(eventually { loop.isWaiting })
        let inside = Locked<Bool?>(nil)
        try loop.performAndWait { inside.withLock { $0 = loop.isWaiting } }
        #expect(inside.withLock { $0 } == false)
        #expect(eventually { loop.isWaiting })
    }

    @Test func falseForALoopThatIsNotRunning() throws {
        try onFreshThread {
            #expect(!PortRunLoop.current.isWaiting)
        }
    }
}
