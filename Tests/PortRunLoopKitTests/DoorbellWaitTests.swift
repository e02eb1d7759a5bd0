import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A loop whose running mode has no fd source and nothing to wake for sleeps on its doorbell
/// (`read(2)` on the eventfd) instead of in libevent: whatever another thread adds meanwhile must
/// still wake it and be served, and the doorbell must keep working when the loop alternates
/// between that wait and libevent.
@Suite(.timeLimit(.minutes(1))) struct DoorbellWaitTests {
    /// Returns once the loop has handled everything queued so far and gone to sleep again (it is
    /// then blocked, or about to block, in its wait with nothing queued): a round trip, then a
    /// bounded wait for its sleep count to pass the count from before the round trip.
    private func settle(_ loop: PortRunLoop) throws -> Bool {
        let sleeps = loop.metrics.sleeps
        try loop.performAndWait {}
        let deadline = Date(timeIntervalSinceNow: 10)
        while loop.metrics.sleeps <= sleeps {
            if Date() > deadline { return false }
            sched_yield()
        }
        return true
    }

    /// A RunLoopThread whose mode holds only a port: it waits on its doorbell.
    private func portOnlyThread(_ name: String) throws -> RunLoopThread {
        let thread = try RunLoopThread(name: name)
        let port = MessagePort()
        try thread.loop.performAndWait { PortRunLoop.current.add(port, forMode: .common) }
        return thread
    }

    @Test func anFdSourceAddedFromAnotherThreadWakesALoopAsleepOnItsDoorbell() throws {
        let thread = try portOnlyThread("doorbell-fd")
        defer { thread.stop() }
        #expect(try settle(thread.loop))
        let pipe = Pipe2()
        pipe.write(7) // ready before the source exists: the loop must register it and then see it
        let got = Signal()
        let seen = Recorder<String>()
        let source = try thread.loop.watch(fileDescriptor: pipe.readEnd, for: .read) { _ in
            _ = pipe.readByte()
            seen.append(Thread.current.name ?? "")
            got.fire()
        }
        defer { source.cancel() }
        #expect(got.wait(seconds: 10))
        #expect(seen.values == ["doorbell-fd"])
        // Now the mode has an fd source: the loop sleeps in libevent, and readiness still wakes it.
        let second = Signal()
        let again = try thread.loop.watch(fileDescriptor: pipe.readEnd, for: .read) { _ in
            _ = pipe.readByte()
            second.fire()
        }
        defer { again.cancel() }
        source.cancel()
        #expect(try settle(thread.loop))
        pipe.write(8)
        #expect(second.wait(seconds: 10))
    }

    @Test func aTimerScheduledFromAnotherThreadFiresOnALoopAsleepOnItsDoorbell() throws {
        let thread = try portOnlyThread("doorbell-timer")
        defer { thread.stop() }
        #expect(try settle(thread.loop))
        let fired = Signal()
        let timer = RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 0.02)) { _ in fired.fire() }
        thread.loop.add(timer, forMode: .common)
        #expect(fired.wait(seconds: 10))
    }

    @Test func aLoopAlternatingBetweenTheTwoWaitsLosesNoWakeUp() throws {
        // Each round: the loop sleeps in libevent (an fd source in its mode), then on its doorbell
        // (the source cancelled), and a perform from this thread must wake it both times.
        let thread = try portOnlyThread("doorbell-alternate")
        defer { thread.stop() }
        let pipe = Pipe2()
        for _ in 0..<50 {
            let source = try thread.loop.watch(fileDescriptor: pipe.readEnd, for: .read) { _ in _ = pipe.readByte() }
            #expect(try settle(thread.loop))
            let woke = Signal()
            thread.loop.perform { woke.fire() }
            #expect(woke.wait(seconds: 10))
            source.cancel()
            #expect(try settle(thread.loop))
            let wokeAgain = Signal()
            thread.loop.perform { wokeAgain.fire() }
            #expect(wokeAgain.wait(seconds: 10))
        }
    }
}
