import Foundation
import PortRunLoopKit
import Synchronization
import Testing
import PortRunLoopTestSupport

/// RunLoopSource (CFRunLoop's version-0 source): signal and perform, order, schedule and cancel,
/// returnAfterSourceHandled, and many threads signalling at once.
@Suite(.timeLimit(.minutes(1))) struct CustomSourceTests {
    private static let other = RunLoop.Mode("CustomSourceTests.other")

    @Test func manySignalsBeforeAPassArePerformedOnce() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let performs = Recorder<Bool>()
            let source = RunLoopSource { _ in performs.append(true) }
            loop.add(source, forMode: .default)
            for _ in 0..<3 { source.signal() }
            #expect(source.isSignalled)
            #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) == .timedOut)
            #expect(performs.count == 1)
            #expect(!source.isSignalled)
        }
    }

    @Test func aSignalFromInsidePerformRunsOnTheNextPass() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let performs = Recorder<Bool>()
            let source = RunLoopSource { source in
                performs.append(true)
                if performs.count < 3 { source.signal() }
            }
            loop.add(source, forMode: .default)
            source.signal()
            #expect(loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: true) == .handledSource)
            #expect(performs.count == 1)
            #expect(loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: true) == .handledSource)
            #expect(performs.count == 2)
        }
    }

    @Test func signalledSourcesRunByOrderAndOnlyTheFirstWhenReturningAfterASource() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let performed = Recorder<Int>()
            let sources = [2, 0, 1].map { order in RunLoopSource(order: order) { _ in performed.append(order) } }
            for source in sources { loop.add(source, forMode: .default) }
            for source in sources { source.signal() }
            #expect(loop.run(mode: .default, timeout: 10, returnAfterSourceHandled: true) == .handledSource)
            #expect(performed.values == [0])
            #expect(loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false) == .timedOut)
            #expect(performed.values == [0, 1, 2])
        }
    }

    @Test func scheduleAndCancelAreCalledPerModeOnTheLoopsThread() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let calls = Recorder<String>()
            let source = RunLoopSource(schedule: { scheduledLoop, mode in
                calls.append("schedule \(mode.rawValue) \(scheduledLoop === PortRunLoop.current)")
            }, cancel: { _, mode in
                calls.append("cancel \(mode.rawValue)")
            }, perform: { _ in })
            loop.add(source, forMode: .default)
            loop.add(source, forMode: Self.other)
            #expect(loop.contains(source, inMode: .default) && loop.contains(source, inMode: Self.other))
            loop.remove(source, forMode: .default)
            #expect(!loop.contains(source, inMode: .default))
            source.signal()
            source.invalidate()
            #expect(!source.isSignalled && !source.isValid)
            #expect(!loop.contains(source, inMode: Self.other))
            let d = RunLoop.Mode.default.rawValue, o = Self.other.rawValue
            #expect(calls.values == ["schedule \(d) true", "schedule \(o) true", "cancel \(d)", "cancel \(o)"])
        }
    }

    @Test func aSourceKeepsItsModeFromRunningDry() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let source = RunLoopSource { _ in }
            loop.add(source, forMode: Self.other)
            #expect(loop.run(mode: Self.other, timeout: 0, returnAfterSourceHandled: false) == .timedOut)
            loop.remove(source, forMode: Self.other)
            #expect(loop.run(mode: Self.other, timeout: 0, returnAfterSourceHandled: false) == .finished)
        }
    }

    @Test func eightThreadsSignallingLoseNoSignalAndNeverOverPerform() throws {
        let thread = try RunLoopThread(name: "signalled")
        defer { thread.stop() }
        let loop = thread.loop
        let performs = Atomic<Int>(0)
        let source = RunLoopSource { _ in performs.add(1, ordering: .relaxed) }
        loop.add(source, forMode: .common)
        try loop.performAndWait {}
        let perThread = 100_000
        let signallers = (0..<8).map { _ in
            let done = Signal()
            let t = Thread {
                for _ in 0..<perThread {
                    source.signal()
                    loop.wakeUp()
                }
                done.fire()
            }
            t.start()
            return done
        }
        for done in signallers { #expect(done.wait()) }
        // Every signal is set before this point. A pass runs queued blocks, then the signalled
        // sources: after two round trips, a pass that began after the last signal has performed it.
        try loop.performAndWait {}
        try loop.performAndWait {}
        #expect(!source.isSignalled)
        let count = performs.load(ordering: .relaxed)
        #expect(count >= 1)
        #expect(count <= 8 * perThread)
    }
}
