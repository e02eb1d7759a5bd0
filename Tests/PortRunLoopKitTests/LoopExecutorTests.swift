import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import PortRunLoopTestSupport
import Testing

/// An actor whose jobs run on a PortRunLoop's thread.
actor LoopPinnedActor {
    let loop: PortRunLoop
    private(set) var count = 0

    init(loop: PortRunLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }

    func whereAmI() -> (onLoopThread: Bool, threadName: String?) {
        (loop.isCurrentThread, Thread.current.name)
    }

    func increment() { count += 1 }

    /// Records, starts a nested run of the loop that handles one perform block, records again.
    /// `queuedJob` is queued (as an executor job) before the perform block.
    func nestedRun(log: ConcurrencyLog<String>) {
        log.append("job-start")
        Task(executorPreference: loop.taskExecutor) { log.append("other-job") }
        loop.perform { log.append("perform-in-nested-run") }
        loop.run(mode: .default, before: .distantFuture)
        log.append("job-end")
    }

    /// Queues another job, then runs the loop in a nested run (returning its result): with no
    /// source in the mode, and a job that cannot start inside this one, the mode is empty.
    func nestedRunWithOnlyAJobQueued(log: ConcurrencyLog<String>) -> RunLoopRunResult {
        Task(executorPreference: loop.taskExecutor) { log.append("other-job") }
        return loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: false)
    }

    /// Handles, in a run nested in this job, a perform block that assumes `other`'s isolation.
    /// Records, from a perform block handled in a run nested in this job, whether the loop says
    /// the block is isolated to it.
    func nestedRunAskingIsolation(log: ConcurrencyLog<String>) {
        let loop = self.loop
        loop.perform { log.append("nested block isolated: \(loop.isIsolatingCurrentContext() == true)") }
        loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5))
        log.append("job-end")
    }

    /// Where a job runs (kernel thread id) and whether it is isolated there.
    func threadAndIsolation() -> (thread: Int32, isolated: Bool) {
        (kernelThreadID(), loop.isIsolatingCurrentContext() == true)
    }
}

/// The calling thread's name (`Thread.current` is unavailable in async code).
func currentThreadName() -> String? { Thread.current.name }

/// Calls `assumeIsolated` on `actor` synchronously (it is unavailable from async code).
func assumeIsolatedCount(_ actor: LoopPinnedActor) -> Int {
    actor.assumeIsolated { $0.count }
}

/// PortRunLoop as SerialExecutor / TaskExecutor: pinned actors, isolation checks, task executor
/// preference, FIFO with perform, no nesting, fail-over after shutdown.
@Suite(.timeLimit(.minutes(1))) struct LoopExecutorTests {
    @Test func pinnedActorRunsOnTheLoopThread() async throws {
        let thread = try RunLoopThread(name: "exec-pinned")
        defer { thread.stop() }
        let actor = LoopPinnedActor(loop: thread.loop)
        let place = await actor.whereAmI()
        #expect(place.onLoopThread)
        #expect(place.threadName == "exec-pinned")
    }

    @Test func pinnedActorIsSerialUnderConcurrentCalls() async throws {
        let thread = try RunLoopThread(name: "exec-serial")
        defer { thread.stop() }
        let actor = LoopPinnedActor(loop: thread.loop)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<250 { await actor.increment() } }
            }
        }
        #expect(await actor.count == 2000)
    }

    @Test func assumeIsolatedSucceedsOnTheLoopThread() throws {
        let thread = try RunLoopThread(name: "exec-assume")
        defer { thread.stop() }
        let actor = LoopPinnedActor(loop: thread.loop)
        // Inside a perform body: not a job, but on the loop's thread, so isolated.
        let count = try thread.loop.performAndWait { assumeIsolatedCount(actor) }
        #expect(count == 0)
        let checks = try thread.loop.performAndWait {
            thread.loop.checkIsolated()
            thread.loop.preconditionIsolated()
            return thread.loop.isIsolatingCurrentContext()
        }
        #expect(checks == true)
        #expect(thread.loop.isIsolatingCurrentContext() == false)
    }

    @Test func assumeIsolatedOffTheLoopThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "exec-off")
            _ = assumeIsolatedCount(LoopPinnedActor(loop: thread.loop))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Incorrect actor executor assumption"), "stderr: \(stderr)")
    }

    /// In a run nested in a running job, the loop answers that a perform block is not isolated to
    /// it (the job's actor is suspended below on the stack).
    @Test func aBlockInARunNestedInAJobIsNotIsolated() async throws {
        let thread = try RunLoopThread(name: "exec-nested-isolation")
        defer { thread.stop() }
        let actor = LoopPinnedActor(loop: thread.loop)
        let log = ConcurrencyLog<String>()
        await actor.nestedRunAskingIsolation(log: log)
        #expect(log.values == ["nested block isolated: false", "job-end"])
    }

    @Test func checkIsolatedOffTheLoopThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "exec-check")
            thread.loop.checkIsolated()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("isolated to the executor of loop 'exec-check' ran on another thread"), "stderr: \(stderr)")
    }

    @Test func sameExecutorIdentity() throws {
        let a = try RunLoopThread(name: "exec-a")
        let b = try RunLoopThread(name: "exec-b")
        defer { a.stop(); b.stop() }
        #expect(a.loop.isSameExclusiveExecutionContext(other: a.loop))
        #expect(!a.loop.isSameExclusiveExecutionContext(other: b.loop))
        let taskExecutor = a.loop.taskExecutor
        #expect(taskExecutor === a.loop.taskExecutor) // one identity while in use
        #expect(taskExecutor.loop === a.loop)
    }

    @Test func taskExecutorPreferenceRunsOnTheLoopThread() async throws {
        let thread = try RunLoopThread(name: "exec-task")
        defer { thread.stop() }
        let loop = thread.loop
        let onLoop = await withTaskExecutorPreference(loop.taskExecutor) { loop.isCurrentThread }
        #expect(onLoop)
        let name = await Task(executorPreference: loop.taskExecutor) { currentThreadName() }.value
        #expect(name == "exec-task")
    }

    @Test func jobsShareTheFIFOWithPerform() async throws {
        let thread = try RunLoopThread(name: "exec-fifo")
        defer { thread.stop() }
        let loop = thread.loop
        let log = ConcurrencyLog<Int>()
        let gate = ConcurrencyGate()
        gate.close(on: loop)
        loop.perform { log.append(1) }
        // A task with an executor preference is enqueued on the loop as it is created.
        let task = Task(executorPreference: loop.taskExecutor) { log.append(2) }
        loop.perform { log.append(3) }
        gate.open()
        await task.value
        try loop.performAndWait {}
        #expect(log.values == [1, 2, 3])
    }

    @Test func jobsDoNotNestInsideAJob() async throws {
        let thread = try RunLoopThread(name: "exec-nest")
        defer { thread.stop() }
        let actor = LoopPinnedActor(loop: thread.loop)
        let log = ConcurrencyLog<String>()
        await actor.nestedRun(log: log)
        // The other job was queued before the perform block, yet it ran only after the job.
        await Task(executorPreference: thread.loop.taskExecutor) {}.value
        try thread.loop.performAndWait {}
        #expect(log.values == ["job-start", "perform-in-nested-run", "job-end", "other-job"])
    }

    /// A job that cannot start (jobs never nest) does not make a nested run's mode non-empty: a
    /// nested run in a job, on a loop with nothing else, returns at once instead of waiting for it.
    @Test func aQueuedJobDoesNotKeepANestedRunFromFinishing() async throws {
        let loopBox = Locked<PortRunLoop?>(nil)
        let done = Locked(false)
        let started = Signal()
        let thread = JoinableThread(name: "exec-empty-nested") {
            let loop = PortRunLoop.current // no source: only jobs keep a run going
            loopBox.withLock { $0 = loop }
            started.fire()
            while !done.withLock({ $0 }) {
                if !loop.run(mode: .default, before: Date(timeIntervalSinceNow: 1)) { sched_yield() }
            }
        }
        #expect(started.wait())
        let loop = try #require(loopBox.withLock { $0 })
        let actor = LoopPinnedActor(loop: loop)
        let log = ConcurrencyLog<String>()
        let result = await actor.nestedRunWithOnlyAJobQueued(log: log)
        #expect(result == .finished)
        await Task(executorPreference: loop.taskExecutor) {}.value
        #expect(log.values == ["other-job"])
        done.withLock { $0 = true }
        #expect(thread.join(timeout: 30))
    }

    @Test func jobsEnqueuedAfterShutdownFailOverAndStayIsolated() async throws {
        let thread = try RunLoopThread(name: "exec-shutdown")
        let loop = thread.loop
        let actor = LoopPinnedActor(loop: loop)
        // Kernel thread ids, not `pthread_t`s: glibc reuses a dead thread's `pthread_t`.
        let loopThread = try loop.performAndWait { kernelThreadID() }
        thread.stop() // joined: the loop is shut down and its thread is gone
        #expect(loop.isShutDown)
        let after = await actor.threadAndIsolation()
        #expect(after.thread != loopThread)
        #expect(after.isolated)
        await actor.increment()
        #expect(await actor.count == 1)
        let taskIsolated = await Task(executorPreference: loop.taskExecutor) { loop.isIsolatingCurrentContext() == true }.value
        #expect(taskIsolated)
    }

    @Test func aJobQueuedBehindAStopIsNotStranded() async throws {
        let thread = try RunLoopThread(name: "exec-stopping")
        let loop = thread.loop
        // From the loop's own thread: stop, then queue a job behind the stop. It runs either in the
        // loop's last turn or, failed over, after the shutdown; either way isolated, never lost.
        let task = try loop.performAndWait { () -> Task<Bool, Never> in
            thread.stop()
            return Task(executorPreference: loop.taskExecutor) { loop.isIsolatingCurrentContext() == true }
        }
        #expect(await task.value)
    }

    @Test func jobsOfAThreadThatExitsFailOver() async throws {
        let bare = BareLoopThread()
        let actor = LoopPinnedActor(loop: bare.loop)
        // Queued on the bare loop (which never runs) as the task is created; still queued when the
        // thread exits and shuts the loop down, so it is handed over to the after-shutdown queue.
        let task = Task(executorPreference: bare.loop.taskExecutor) {
            (kernelThreadID(), bare.loop.isIsolatingCurrentContext() == true)
        }
        bare.exit()
        let report = await task.value
        #expect(report.0 != bare.threadID)
        #expect(report.1)
        await actor.increment()
        #expect(await actor.count == 1)
    }
}
