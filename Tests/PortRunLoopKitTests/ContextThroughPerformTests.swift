import Foundation
import PortRunLoopKit
import ServiceContextModule
import Testing
import PortRunLoopTestSupport

extension ServiceContextTests {
    /// The caller's `ServiceContext` travels with `perform`, `performAndWait`, `submit` and executor
    /// jobs, and work queued without one sees none.
    @Suite(.timeLimit(.minutes(1))) struct ContextThroughPerformTests {
        @Test func performRunsInTheCallersContext() throws {
            let thread = try RunLoopThread(name: "ctx-perform")
            defer { thread.stop() }
            let seen = Recorder<String?>()
            let done = Signal()
            withTrace("perform-1") { thread.loop.perform { seen.append(currentTraceID()) } }
            thread.loop.perform { seen.append(currentTraceID()) } // queued without a context
            withTrace("perform-2") { thread.loop.perform { seen.append(currentTraceID()); done.fire() } }
            #expect(done.wait())
            #expect(seen.values == ["perform-1", nil, "perform-2"])
        }

        @Test func performAndWaitRunsInTheCallersContext() throws {
            let thread = try RunLoopThread(name: "ctx-perform-and-wait")
            defer { thread.stop() }
            let traced = try withTrace("call") { try thread.loop.performAndWait { currentTraceID() } }
            let plain = try thread.loop.performAndWait { currentTraceID() }
            #expect(traced == "call")
            #expect(plain == nil)
        }

        @Test func submitRunsInTheCallingTasksContext() async throws {
            let thread = try RunLoopThread(name: "ctx-submit")
            defer { thread.stop() }
            let traced = try await withTrace("task") { try await thread.loop.submit { currentTraceID() } }
            let plain = try await thread.loop.submit { currentTraceID() }
            #expect(traced == "task")
            #expect(plain == nil)
        }

        @Test func taskExecutorJobsKeepTheirTasksContext() async throws {
            let thread = try RunLoopThread(name: "ctx-task-executor")
            defer { thread.stop() }
            let seen = await withTrace("job") {
                await Task(executorPreference: thread.loop.taskExecutor) {
                    (thread.loop.isCurrentThread, currentTraceID())
                }.value
            }
            #expect(seen.0)
            #expect(seen.1 == "job")
            let plain = await Task(executorPreference: thread.loop.taskExecutor) { currentTraceID() }.value
            #expect(plain == nil)
        }

        @Test func actorJobsKeepTheirTasksContext() async throws {
            let thread = try RunLoopThread(name: "ctx-actor")
            defer { thread.stop() }
            let actor = ContextProbeActor(loop: thread.loop)
            let traced = await withTrace("actor") { await actor.traceIDOnLoop() }
            #expect(traced.onLoop)
            #expect(traced.traceID == "actor")
            #expect(await actor.traceIDOnLoop().traceID == nil)
        }
    }

    /// An actor whose jobs run on a loop's thread.
    actor ContextProbeActor {
        let loop: PortRunLoop
        init(loop: PortRunLoop) { self.loop = loop }
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }
        func traceIDOnLoop() -> (onLoop: Bool, traceID: String?) { (loop.isCurrentThread, currentTraceID()) }
    }
}
