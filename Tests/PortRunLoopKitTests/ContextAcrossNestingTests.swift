import Foundation
import PortRunLoopKit
import ServiceContextModule
import Testing
import PortRunLoopTestSupport

extension ServiceContextTests {
    /// Contexts across nested runs and synchronous-call cycles: each piece of work sees its own
    /// caller's context, never an outer handler's, and the loop's own sources see none.
    @Suite(.timeLimit(.minutes(1))) struct ContextAcrossNestingTests {
        @Test func aNestedRunGivesEachItemItsOwnContext() throws {
            try onFreshThread {
                let loop = PortRunLoop.current
                let seen = Recorder<String>()
                withTrace("outer") {
                    loop.perform {
                        seen.append("outer-before:\(currentTraceID() ?? "none")")
                        withTrace("inner") { loop.perform { seen.append("inner:\(currentTraceID() ?? "none")") } }
                        // Work queued from inside the handler carries the handler's context.
                        loop.perform { seen.append("from-handler:\(currentTraceID() ?? "none")") }
                        while seen.count < 4 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
                        seen.append("outer-after:\(currentTraceID() ?? "none")")
                    }
                }
                // Queued without a context; run by the nested run inside the "outer" handler.
                loop.perform { seen.append("plain:\(currentTraceID() ?? "none")") }
                while seen.count < 5 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
                #expect(seen.values == ["outer-before:outer", "plain:none", "inner:inner", "from-handler:outer",
                                        "outer-after:outer"])
            }
        }

        @Test func timersAndFdSourcesRunWithoutContextEvenInsideAHandlersNestedRun() throws {
            try onFreshThread {
                let loop = PortRunLoop.current
                let seen = Recorder<String>()
                let pipe = Pipe2()
                let source = try loop.watch(fileDescriptor: pipe.readEnd, for: .read) { _ in
                    _ = pipe.readByte()
                    seen.append("fd:\(currentTraceID() ?? "none")")
                }
                defer { source.cancel() }
                withTrace("handler") {
                    loop.perform {
                        loop.add(RunLoopTimer(fireAt: Date(timeIntervalSinceNow: -1)) { _ in
                            seen.append("timer:\(currentTraceID() ?? "none")")
                        }, forMode: .default)
                        pipe.write(1)
                        while seen.count < 2 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
                    }
                }
                while seen.count < 2 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)) }
                #expect(Set(seen.values) == ["timer:none", "fd:none"])
            }
        }

        @Test func aPerformAndWaitCycleBetweenTwoLoopsKeepsTheContext() throws {
            let first = try RunLoopThread(name: "ctx-cycle-1")
            let second = try RunLoopThread(name: "ctx-cycle-2")
            defer { first.stop(); second.stop() }
            // first → second → first: the innermost body runs on `first` while `first` itself waits in
            // its own performAndWait, and must still see the context the chain started with.
            let seen = try withTrace("cycle") {
                try first.loop.performAndWait {
                    let onFirst = currentTraceID()
                    let (onSecond, backOnFirst) = try second.loop.performAndWait {
                        (currentTraceID(), try first.loop.performAndWait { currentTraceID() })
                    }
                    return [onFirst, onSecond, backOnFirst, currentTraceID()]
                }
            }
            #expect(seen == ["cycle", "cycle", "cycle", "cycle"])
            // Served while the waiting loop waits: a call without a context sees none there.
            let plain = try first.loop.performAndWait {
                try withTrace("waiter") { try second.loop.performAndWait { try first.loop.performAndWait { currentTraceID() } } }
            }
            #expect(plain == "waiter")
            let none = try first.loop.performAndWait {
                withTrace("waiter") { first.loop.perform {} } // leaves nothing behind
                return try second.loop.performAndWait { currentTraceID() }
            }
            #expect(none == nil)
        }
    }
}
