import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// In a run nested inside an actor's job, code on the loop's thread is not isolated to the loop's
/// executor: the actor's job is suspended below it on the stack, so `assumeIsolated` must not let
/// other code in. The job itself, and code outside any job, still are.
@Suite(.timeLimit(.minutes(1))) struct NestedRunIsolationTests {
    actor Pinned {
        nonisolated let loop: PortRunLoop
        init(loop: PortRunLoop) { self.loop = loop }
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }

        /// Answers (isolated in the job itself, isolated in a perform block of a nested run).
        func check() -> (Bool, Bool) {
            let loop = self.loop
            let inJob = loop.isIsolatingCurrentContext() ?? false
            let nested = Locked<Bool?>(nil)
            loop.perform(inModes: [.default]) { nested.withLock { $0 = loop.isIsolatingCurrentContext() } }
            while nested.withLock({ $0 }) == nil {
                loop.run(mode: .default, before: Date(timeIntervalSinceNow: 1))
            }
            return (inJob, nested.withLock { $0 }!)
        }
    }

    @Test func aNestedRunInsideAnActorJobIsNotIsolated() async throws {
        let thread = try RunLoopThread(name: "nested-isolation")
        defer { thread.stop() }
        let actor = Pinned(loop: thread.loop)
        let (inJob, nested) = await actor.check()
        #expect(inJob)
        #expect(!nested)
        // Outside any job, the loop's own thread is isolated (perform blocks, handlers).
        #expect(try thread.loop.performAndWait { thread.loop.isIsolatingCurrentContext() } == true)
    }
}
