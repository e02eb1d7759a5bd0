import Foundation
@testable import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing
import PortRunLoopTestSupport

/// RunLoopThread's documented stop rule — everything queued before `stop()` (in the running mode)
/// is handled, then the loop shuts down — must hold even when `stop()` arrives while the thread is
/// inside a nested run (a modal run in another mode, or a synchronous wait in `performAndWait`),
/// where the stop ends every run at once. Found by the stress suite.
@Suite(.timeLimit(.minutes(1))) struct RunLoopThreadStopRuleTests {
    static let modal = RunLoop.Mode("RunLoopThreadStopRuleTests.modal")

    @Test func workQueuedBeforeStopRunsAlthoughStopArrivesInAModalRun() throws {
        let thread = try RunLoopThread(name: "modal-stop")
        let inModal = Signal()
        let modalPort = MessagePort()
        thread.loop.add(modalPort, forMode: Self.modal) // keeps the modal mode non-empty
        thread.loop.perform {
            inModal.fire()
            PortRunLoop.current.run(mode: Self.modal, before: .distantFuture) // ended by stop()
        }
        #expect(inModal.wait())
        let ran = CallCounter()
        #expect(thread.loop.perform { ran.increment() }) // default mode: waits for the modal run to end
        let sent = MessagePort(queueLimit: 10)
        let delivered = CallCounter()
        sent.setHandler { _ in delivered.increment() }
        thread.loop.add(sent, forMode: .default)
        #expect(sent.send(before: Date()))
        thread.stop()
        #expect(ran.value == 1, "a block queued before stop() was discarded")
        #expect(delivered.value == 1, "a message sent before stop() was discarded")
    }

    @Test func workQueuedBeforeStopRunsAlthoughStopIsCalledDuringASynchronousWait() throws {
        let a = try RunLoopThread(name: "waiter-a")
        let b = try RunLoopThread(name: "target-b")
        defer { b.stop() }
        let bodyEntered = Signal()
        let releaseBody = Signal()
        let loopB = b.loop
        // A waits in performAndWait on B (its loop then runs only synchronous calls).
        a.loop.perform {
            try? loopB.performAndWait {
                bodyEntered.fire()
                _ = releaseBody.wait(seconds: 30)
            }
        }
        #expect(bodyEntered.wait())
        let ran = CallCounter()
        #expect(a.loop.perform { ran.increment() }) // cannot run during A's synchronous wait
        // A synchronous call runs on A even while it waits; stop() from there ends every run of A.
        try a.loop.performAndWait { a.stop() }
        releaseBody.fire()
        // Wait for A's thread to have shut its loop down (each call either runs or fails).
        let deadline = Date(timeIntervalSinceNow: 30)
        while !a.loop.isShutDown, Date() < deadline { _ = try? a.loop.performAndWait(timeout: .seconds(1)) {} }
        try #require(a.loop.isShutDown, "A's loop should shut down once stop() ran on it")
        #expect(ran.value == 1, "a block queued before stop() was discarded")
    }

    /// A stop called on another loop's thread serves that loop while it waits: work queued before
    /// the stop that calls back into the caller's loop completes, and both threads go on.
    @Test func workQueuedBeforeStopMayCallBackIntoTheStoppingLoop() throws {
        let stopped = try RunLoopThread(name: "stop-rule-callee")
        let stopper = try RunLoopThread(name: "stop-rule-caller")
        defer { stopper.stop() }
        let calledBack = Locked<Bool?>(nil)
        let release = holdLoop(stopped)
        stopped.loop.perform {
            let ran = (try? stopper.loop.performAndWait { true }) ?? false
            calledBack.withLock { $0 = ran }
        }
        let returned = Signal()
        stopper.loop.perform {
            stopped.stop()
            returned.fire()
        }
        // The stop is queued behind the call back: `stopper` is inside stop() when the call comes.
        #expect(eventually { stopped.loop.inbox.withLock { $0.work.count } == 2 })
        release.fire()
        #expect(returned.wait(seconds: 30))
        #expect(calledBack.withLock { $0 } == true)
        #expect(stopped.isStopped)
    }
}
