import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopStressEngine
import PortRunLoopTestSupport

/// System.isMainThread(): the per-thread cached answer matches Foundation's, on every thread.
@Suite(.timeLimit(.minutes(1))) struct MainThreadCheckTests {
    @Test func agreesWithFoundationOnTheTestThreadAndOnOtherThreads() throws {
        #expect(System.isMainThread() == Thread.isMainThread)
        #expect(System.isMainThread() == Thread.isMainThread, "the cached answer is the same")
        let other = Locked<[Bool]>([])
        try JoinableThread.run {
            other.withLock { $0 = [System.isMainThread(), System.isMainThread(), Thread.isMainThread] }
        }
        #expect(other.withLock { $0 } == [false, false, false])
    }
}
