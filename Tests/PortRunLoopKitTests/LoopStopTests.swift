import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// stop(): from another thread, innermost run only, no carry-over when not running.
@Suite(.timeLimit(.minutes(1))) struct LoopStopTests {
    @Test func stopFromAnotherThreadEndsRun() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let keepAlive = MessagePort()
            loop.add(keepAlive, forMode: .default)
            // Ask another thread to stop us once we are surely inside run(): it stops from a
            // perform that runs inside the run.
            loop.perform {
                Thread.detachNewThread { loop.stop() }
            }
            let result = loop.run(mode: .default, timeout: 30, returnAfterSourceHandled: false)
            #expect(result == .stopped)
        }
    }

    @Test func stopEndsOnlyTheInnermostRun() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let modal = RunLoop.Mode("modal")
            loop.add(MessagePort(), forMode: .default)
            loop.add(MessagePort(), forMode: modal)
            let inner = Recorder<RunLoopRunResult>()
            loop.perform(inModes: [.default]) {
                loop.perform(inModes: [modal]) { loop.stop() }
                inner.append(loop.run(mode: modal, timeout: 30, returnAfterSourceHandled: false))
                // The outer run is still going: stop it too.
                loop.stop()
            }
            let outer = loop.run(mode: .default, timeout: 30, returnAfterSourceHandled: false)
            #expect(inner.values == [.stopped])
            #expect(outer == .stopped)
        }
    }

    @Test func stopOnALoopThatIsNotRunningIsANoOp() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let stoppedElsewhere = Signal()
            Thread.detachNewThread { loop.stop(); stoppedElsewhere.fire() }
            #expect(stoppedElsewhere.wait())
            loop.stop()
            // The stop does not carry over: this run times out instead of returning .stopped.
            #expect(loop.run(mode: .default, timeout: 0.05, returnAfterSourceHandled: false) == .timedOut)
        }
    }

    @Test func aStopForARunThatEndedBeforeSeeingItDoesNotEndTheNextRun() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            loop.perform {
                // Stopped from another thread while this run is in progress...
                let stopped = Signal()
                Thread.detachNewThread { loop.stop(); stopped.fire() }
                #expect(stopped.wait())
            }
            // ...which returns after this block, before it collects the request.
            #expect(loop.run(mode: .default, timeout: 5, returnAfterSourceHandled: true) == .handledSource)
            // The request was addressed to that run: this one times out.
            #expect(loop.run(mode: .default, timeout: 0.05, returnAfterSourceHandled: false) == .timedOut)
        }
    }

    @Test func runReturnsWhenStoppedFromAHandler() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let port = MessagePort()
            port.setHandler { _ in PortRunLoop.current.stop() }
            loop.add(port, forMode: .default)
            port.send(before: Date())
            loop.run() // returns because of stop(), not because the mode ran dry
            #expect(port.statistics.delivered == 1)
        }
    }
}
