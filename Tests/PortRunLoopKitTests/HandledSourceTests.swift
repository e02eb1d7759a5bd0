import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// What ends a run that returns after a handled source (Semantics R3, CFRunLoop's
/// `sourceHandledThisLoop`): port messages, fd sources, custom sources and queued `perform` work
/// do; timers do not. `run(mode:before:)` answers false only for a mode empty when it is called.
@Suite(.timeLimit(.minutes(1))) struct HandledSourceTests {
    @Test func aRepeatingTimerAloneRunsToTheTimeout() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<Bool>()
            let timer = RunLoopTimer(fireAt: Date(), interval: 0.01, repeats: true) { _ in fired.append(true) }
            loop.add(timer, forMode: .default)
            let start = Date()
            #expect(loop.run(mode: .default, timeout: 0.1, returnAfterSourceHandled: true) == .timedOut)
            #expect(Date().timeIntervalSince(start) >= 0.1)
            #expect(fired.count >= 2)
            timer.invalidate()
        }
    }

    @Test func runModeBeforeDateGoesOnPastATimerUntilTheDate() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<Bool>()
            loop.add(RunLoopTimer(fireAt: Date(), interval: 0.01, repeats: true) { _ in fired.append(true) }, forMode: .default)
            let start = Date()
            #expect(loop.run(mode: .default, before: start.addingTimeInterval(0.05)))
            #expect(Date().timeIntervalSince(start) >= 0.05)
            #expect(fired.count >= 2)
        }
    }

    @Test func aModeEmptiedByItsLastTimerStillAnswersTrue() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let fired = Recorder<Bool>()
            loop.add(RunLoopTimer(fireAt: Date()) { _ in fired.append(true) }, forMode: .default)
            // corelibs: false only when the mode is empty before the run.
            #expect(loop.run(mode: .default, before: .distantFuture))
            #expect(fired.count == 1)
            #expect(!loop.run(mode: .default, before: .distantFuture))
        }
    }

    @Test func aCustomSourceEndsTheRunAfterTheTimersOfItsTurn() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let events = Recorder<String>()
            let timer = RunLoopTimer(fireAt: Date(), interval: 0.01, repeats: true) { _ in events.append("timer") }
            loop.add(timer, forMode: .default)
            let source = RunLoopSource { _ in events.append("source") }
            loop.add(source, forMode: .default)
            let thread = Thread {
                // After a few fires: a run the timer alone ended would have returned already.
                while events.count < 3 { sched_yield() }
                source.signal()
                loop.wakeUp()
            }
            thread.start()
            #expect(loop.run(mode: .default, timeout: 30, returnAfterSourceHandled: true) == .handledSource)
            #expect(events.values.last == "source")
            #expect(events.values.filter { $0 == "timer" }.count >= 3)
            timer.invalidate()
        }
    }

    @Test func portMessagesFdSourcesAndPerformedBlocksEachEndTheRun() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            // A timer keeps the mode alive and must not be what ends the runs below.
            let timer = RunLoopTimer(fireAt: Date(), interval: 0.005, repeats: true) { _ in }
            loop.add(timer, forMode: .default)
            let port = MessagePort()
            let received = Recorder<Bool>()
            port.setHandler { _ in received.append(true) }
            loop.add(port, forMode: .default)
            Thread { _ = port.send(before: .distantFuture) }.start()
            #expect(loop.run(mode: .default, timeout: 30, returnAfterSourceHandled: true) == .handledSource)
            #expect(received.count == 1)

            let performed = Recorder<Bool>()
            Thread { loop.perform { performed.append(true) } }.start()
            #expect(loop.run(mode: .default, timeout: 30, returnAfterSourceHandled: true) == .handledSource)
            #expect(performed.count == 1)

            let pipe = Pipe2()
            let readable = Recorder<Bool>()
            let source = try loop.watch(fileDescriptor: pipe.readEnd, for: .read) { _ in
                _ = pipe.readByte()
                readable.append(true)
            }
            Thread { pipe.write(1) }.start()
            #expect(loop.run(mode: .default, timeout: 30, returnAfterSourceHandled: true) == .handledSource)
            #expect(readable.count == 1)
            source.cancel()
            port.invalidate()
            timer.invalidate()
        }
    }
}
