import Foundation
import MetricsTestKit
import PortRunLoopKit
import PortRunLoopMetrics
import Testing
import PortRunLoopTestSupport

/// `LoopTurnReporter`: per-turn timers and counters by kind, labelled with the loop's name.
@Suite(.timeLimit(.minutes(1))) struct LoopTurnReporterTests {
    @Test func aScriptedTurnIsCountedByKindWithTheLoopLabel() throws {
        let metrics = TestMetrics()
        let name = try onFreshThread(name: "reporter-loop") { () throws -> String in
            let loop = PortRunLoop.current
            loop.metricsDelegate = LoopTurnReporter(loop: loop, factory: metrics)
            let port = MessagePort(queueLimit: 8)
            port.setHandler { message in if message.msgid == 2 { loop.stop() } }
            loop.add(port, forMode: .default)
            defer { port.invalidate(); loop.metricsDelegate = nil }
            loop.perform {
                // The next turn: three blocks and two messages, all queued now.
                for _ in 0..<3 { loop.perform {} }
                port.send(before: .distantFuture, msgid: 1)
                port.send(before: .distantFuture, msgid: 2)
            }
            loop.run()
            return loop.name
        }
        func items(_ kind: String) throws -> TestCounter {
            try metrics.expectCounter("portrunloop_turn_items", [("loop", name), ("kind", kind)])
        }
        // One increment per turn that handled something of the kind: the script, then its work.
        #expect(try items("blocks").values == [1, 3])
        #expect(try items("messages").values == [2])
        #expect(try items("jobs").values.isEmpty)
        #expect(try items("timers").values.isEmpty)
        #expect(try items("fds").values.isEmpty)
        let turns = try metrics.expectCounter("portrunloop_turns", [("loop", name)]).totalValue
        #expect(turns >= 2)
        let busy = try metrics.expectTimer("portrunloop_turn_busy", [("loop", name)]).values
        let sleep = try metrics.expectTimer("portrunloop_turn_sleep", [("loop", name)]).values
        #expect(Int64(busy.count) == turns)
        #expect(Int64(sleep.count) == turns)
        #expect(busy.allSatisfy { $0 >= 0 } && sleep.allSatisfy { $0 >= 0 })
    }

    @Test func recordsExactTimesAndSkipsNestedTurns() throws {
        let metrics = TestMetrics()
        let reporter = LoopTurnReporter(loopName: "scripted", dimensions: [("host", "a")], factory: metrics)
        let start = ContinuousClock.now
        let info = LoopTurnInfo(mode: .default, startTime: start, endTime: start + .milliseconds(5),
                                sleepTime: .microseconds(2), blocksRun: 1, executorJobsRun: 4,
                                messagesDelivered: 0, timersFired: 2, fdEventsHandled: 7)
        try onFreshThread(name: "reporter-direct") {
            let loop = PortRunLoop.current
            reporter.processedTurn(of: loop, info: info)
            var nested = info
            nested.nestingLevel = 1
            reporter.processedTurn(of: loop, info: nested)
        }
        let dimensions = [("loop", "scripted"), ("host", "a")]
        #expect(try metrics.expectTimer("portrunloop_turn_busy", dimensions).values == [5_000_000])
        #expect(try metrics.expectTimer("portrunloop_turn_sleep", dimensions).values == [2_000])
        #expect(try metrics.expectCounter("portrunloop_turns", dimensions).values == [1])
        func items(_ kind: String) throws -> [Int64] {
            try metrics.expectCounter("portrunloop_turn_items", dimensions + [("kind", kind)]).values
        }
        #expect(try items("blocks") == [1])
        #expect(try items("jobs") == [4])
        #expect(try items("messages") == [])
        #expect(try items("timers") == [2])
        #expect(try items("fds") == [7])
    }
}
