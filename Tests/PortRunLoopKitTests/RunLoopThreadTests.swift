import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// RunLoopThread: a named thread running its loop; stop() handles what was queued, then joins.
@Suite(.timeLimit(.minutes(1))) struct RunLoopThreadTests {
    @Test func runsOnANamedThreadAndKeepsRunningWithNothingScheduled() throws {
        let thread = try RunLoopThread(name: "worker")
        defer { thread.stop() }
        #expect(thread.name == "worker")
        #expect(thread.loop.name == "worker")
        #expect(!thread.loop.isCurrentThread)
        #expect(try thread.loop.performAndWait { PortRunLoop.current === thread.loop && thread.loop.isCurrentThread })
        #expect(try thread.loop.performAndWait { Thread.current.name } == "worker")
    }

    @Test func aLongNameIsCutToTheKernelsFifteenBytes() throws {
        // The kernel keeps 15 bytes of a thread's name; a longer one is cut, not refused (a
        // refused name left the thread with the name of the thread that made it).
        let thread = try RunLoopThread(name: "portrunloop.requests-and-more")
        defer { thread.stop() }
        let kernelName = try thread.loop.performAndWait {
            try String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
        }
        #expect(kernelName == "portrunloop.req")
        #expect(thread.name == "portrunloop.requests-and-more")
    }

    @Test func stopHandlesEverythingQueuedBeforeItThenShutsDown() throws {
        let thread = try RunLoopThread(name: "stopper")
        let port = MessagePort(queueLimit: 1000)
        let seen = Recorder<String>()
        port.setHandler { seen.append("message \($0.msgid)") }
        thread.loop.add(port, forMode: .common)
        let release = Signal()
        thread.loop.perform { _ = release.wait() } // hold the loop so the rest stays queued
        for i in 0..<3 { thread.loop.perform { seen.append("perform \(i)") } }
        for i in 0..<3 { port.send(before: Date(), msgid: UInt32(i)) }
        release.fire()
        thread.stop()
        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
        #expect(Set(seen.values) == Set((0..<3).map { "perform \($0)" } + (0..<3).map { "message \($0)" }))
        #expect(seen.values.filter { $0.hasPrefix("perform") } == ["perform 0", "perform 1", "perform 2"])
        #expect(seen.values.filter { $0.hasPrefix("message") } == ["message 0", "message 1", "message 2"])
        // Afterwards: everything is refused, clearly.
        #expect(!port.isValid)
        #expect(!port.send(before: Date()))
        #expect(!thread.loop.perform {})
        #expect(throws: PortRunLoopError.loopShutDown) { try thread.loop.performAndWait {} }
    }

    @Test func stopIsIdempotentAndConcurrentCallersAllReturn() throws {
        let thread = try RunLoopThread(name: "twice")
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread { thread.stop(); group.leave() }
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        thread.stop()
        #expect(thread.isStopped)
    }

    @Test func stopFromTheThreadItselfEndsTheLoop() throws {
        let thread = try RunLoopThread(name: "self-stop")
        let loop = thread.loop
        loop.perform { thread.stop() }
        // The thread exits on its own; a call made after that fails instead of hanging.
        let outcome = Recorder<Bool>()
        let deadline = Date(timeIntervalSinceNow: 30)
        while !loop.isShutDown, Date() < deadline {
            do { try loop.performAndWait(timeout: .seconds(1)) {} } catch { outcome.append(true) }
        }
        try #require(loop.isShutDown, "the loop should shut down once its thread stopped itself")
        #expect(throws: PortRunLoopError.loopShutDown) { try loop.performAndWait(timeout: .seconds(5)) {} }
    }

    @Test func aStopFromAnotherThreadWaitsForAThreadThatStoppedItself() throws {
        let thread = try RunLoopThread(name: "self-stop-wait")
        let stoppedItself = Signal()
        let release = Signal()
        thread.loop.perform {
            thread.stop()
            stoppedItself.fire()
            _ = release.wait(seconds: 0.3) // the handler goes on after its stop(); bounded, and never released
        }
        #expect(stoppedItself.wait())
        thread.stop() // returns once the thread has shut its loop down, whatever its handler does first
        #expect(thread.isStopped)
        #expect(thread.loop.isShutDown)
        #expect(!thread.loop.perform {})
    }

    @Test func releasingTheLastReferenceStopsTheThreadAndLogsIt() throws {
        let recorder = LogRecorder()
        var thread: RunLoopThread? = try RunLoopThread(name: "released", logger: recorder.logger)
        let loop = thread!.loop
        let ran = Signal()
        #expect(loop.perform { ran.fire() })
        #expect(ran.wait())
        #expect(thread?.isStopped == false)
        thread = nil // its loop alone does not keep it running; the release stops and joins it
        #expect(loop.isShutDown)
        #expect(!loop.perform {})
        let said = recorder.entries.filter { $0.message == "RunLoopThread released while running: stopping it" }
        #expect(said.count == 1)
        #expect(said.first?.level == .debug)
        #expect(said.first?["portrunloop.loop"] == "released")
    }
}
