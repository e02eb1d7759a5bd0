import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// run(mode:before:) and the CF-style run's result codes.
@Suite(.timeLimit(.minutes(1))) struct RunModeTests {
    @Test func runInAnEmptyModeReturnsFalseAtOnce() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let start = Date()
            #expect(!loop.run(mode: .default, before: .distantFuture))
            #expect(loop.run(mode: .default, timeout: 100, returnAfterSourceHandled: false) == .finished)
            #expect(Date().timeIntervalSince(start) < 5)
        }
    }

    @Test func runReturnsAfterTheFirstHandledSource() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let port = MessagePort()
            loop.add(port, forMode: .default)
            port.send(before: Date())
            #expect(loop.run(mode: .default, timeout: 100, returnAfterSourceHandled: true) == .handledSource)
        }
    }

    @Test func runTimesOut() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let start = Date()
            #expect(loop.run(mode: .default, timeout: 0.05, returnAfterSourceHandled: false) == .timedOut)
            #expect(Date().timeIntervalSince(start) >= 0.05)
        }
    }

    @Test func runWithoutStopReturnsWhenTheModeRunsDry() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let timer = RunLoopTimer(after: 0.01) { _ in }
            loop.add(timer, forMode: .default)
            loop.run() // the one-shot timer fires, invalidates itself, the mode is empty: run returns
            #expect(!timer.isValid)
        }
    }

    @Test func runUntilDateReturnsAtTheDate() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let until = Date(timeIntervalSinceNow: 0.05)
            loop.run(until: until)
            #expect(Date() >= until)
        }
    }

    @Test func pendingWorkForAModeMakesItNonEmpty() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let ran = Recorder<Bool>()
            loop.perform(inModes: [.default]) { ran.append(true) }
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(ran.values == [true])
            #expect(!loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
        }
    }
}
