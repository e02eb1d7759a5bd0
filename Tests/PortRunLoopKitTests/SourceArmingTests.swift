import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// What runs cost libevent: entering and leaving a run of the mode already armed makes no
/// `event_add` or `event_del`, however many sources are registered; switching modes touches only
/// the fd sources that actually fired in the other mode (``LoopMetrics/eventAdds``/``eventDeletes``).
@Suite(.timeLimit(.minutes(1))) struct SourceArmingTests {
    /// `count` fd sources watching 1,000 idle fds (both ends of 500 pipes, for read readiness:
    /// never ready), several sources per fd, so that parallel tests stay far below the process's
    /// fd limit.
    private func watchIdle(_ count: Int, on loop: PortRunLoop, modes: [RunLoop.Mode]) throws -> ([FileDescriptorSource], [Pipe2]) {
        let pipes = (0..<500).map { _ in Pipe2() }
        var sources: [FileDescriptorSource] = []
        for index in 0..<count {
            let pipe = pipes[(index / 2) % pipes.count]
            let fd = index % 2 == 0 ? pipe.readEnd : pipe.writeEnd
            sources.append(try loop.watch(fileDescriptor: fd, for: .read, inModes: modes) { _ in })
        }
        return (sources, pipes)
    }

    @Test func runningTheArmedModeAgainTouchesNoRegistration() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let (sources, pipes) = try watchIdle(10_000, on: loop, modes: [.default])
            for _ in 0..<50 { loop.add(RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 3600)) { _ in }, forMode: .default) }
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: -1))
            let before = loop.metrics
            for _ in 0..<200 { loop.run(mode: .default, before: Date(timeIntervalSinceNow: -1)) }
            for _ in 0..<200 { _ = loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true) }
            let spent = loop.metrics.since(before)
            #expect(spent.eventAdds == 0)
            #expect(spent.eventDeletes == 0)
            withExtendedLifetime(pipes) { for source in sources { source.cancel() } }
        }
    }

    @Test func switchingToAnotherModeAndBackTouchesOnlyWhatFired() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let other = RunLoop.Mode("arming.other")
            let (sources, pipes) = try watchIdle(10_000, on: loop, modes: [.default])
            // Five sources of the default mode that are ready: they fire while `other` runs.
            let ready = (0..<5).map { _ in Pipe2() }
            let handled = Recorder<Int>()
            var readySources: [FileDescriptorSource] = []
            for (index, pipe) in ready.enumerated() {
                readySources.append(try loop.watch(fileDescriptor: pipe.readEnd, for: .read, inModes: [.default]) { _ in
                    _ = pipe.readByte()
                    handled.append(index)
                })
            }
            loop.add(MessagePort(), forMode: other) // so `other` is not empty
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: -1))
            var before = loop.metrics
            // Nothing ready: a run of another mode and back costs nothing.
            _ = loop.run(mode: other, timeout: 0, returnAfterSourceHandled: false)
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: -1))
            var spent = loop.metrics.since(before)
            #expect(spent.eventAdds == 0 && spent.eventDeletes == 0)

            for pipe in ready { pipe.write(1) }
            before = loop.metrics
            _ = loop.run(mode: other, timeout: 0, returnAfterSourceHandled: false)
            #expect(handled.count == 0) // not handled in the other mode
            spent = loop.metrics.since(before)
            #expect(spent.eventDeletes == 5) // suspended: they fired in the wrong mode
            before = loop.metrics
            // No deadline, so the loop arms no wake-up timer: every event_add counted is an fd's.
            while handled.count < 5 { loop.run(mode: .default, before: .distantFuture) }
            spent = loop.metrics.since(before)
            #expect(spent.eventAdds == 5) // re-armed by the run of their mode, nothing else
            #expect(Set(handled.values) == Set(0..<5))
            withExtendedLifetime((pipes, ready)) {
                for source in sources + readySources { source.cancel() }
            }
        }
    }

    @Test func nestedRunsOfAnotherModeLeaveTimersAndFdsForTheirOwnMode() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let other = RunLoop.Mode("arming.nested")
            let order = Recorder<String>()
            let pipe = Pipe2()
            let fdSource = try loop.watch(fileDescriptor: pipe.readEnd, for: .read, inModes: [.default]) { _ in
                _ = pipe.readByte()
                order.append("fd in \(PortRunLoop.current.currentMode?.rawValue ?? "?")")
            }
            loop.add(RunLoopTimer(fireAt: Date(timeIntervalSinceNow: -1)) { _ in
                order.append("timer in \(PortRunLoop.current.currentMode?.rawValue ?? "?")")
            }, forMode: .default)
            let port = MessagePort()
            port.setHandler { _ in
                // Both the timer and the fd are due while this nested run of another mode polls.
                order.append("nested start")
                pipe.write(7)
                _ = PortRunLoop.current.run(mode: other, timeout: 0.02, returnAfterSourceHandled: false)
                order.append("nested end")
            }
            loop.add(port, forMode: other)
            loop.add(port, forMode: .default)
            loop.add(MessagePort(), forMode: other)
            #expect(port.send(before: .distantFuture, msgid: 1))
            var turns = 0
            while order.count < 4 && turns < 100 {
                loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5))
                turns += 1
            }
            let seen = order.values
            #expect(seen.first == "nested start")
            let nestedEnd = try #require(seen.firstIndex(of: "nested end"))
            // The timer may fire before the port's turn (it was due first); neither may run in `other`.
            #expect(!seen.contains("fd in \(other.rawValue)") && !seen.contains("timer in \(other.rawValue)"))
            #expect(seen.contains("fd in \(RunLoop.Mode.default.rawValue)"))
            #expect(seen.contains("timer in \(RunLoop.Mode.default.rawValue)"))
            #expect(seen.firstIndex(of: "fd in \(RunLoop.Mode.default.rawValue)")! > nestedEnd)
            fdSource.cancel()
        }
    }
}
