import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Ready fds within a turn: each handler once per turn, in the order reported, none starved, and a
/// source cancelled by an earlier handler of the same turn does not run.
@Suite(.timeLimit(.minutes(1))) struct ReadyFileDescriptorTests {
    @Test func aHandlerThatCancelsAnotherReadySourceKeepsItFromRunning() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let pipes = (0..<2).map { _ in Pipe2() }
            let calls = Recorder<Int>()
            let sources = Locked<[FileDescriptorSource]>([])
            for (index, pipe) in pipes.enumerated() {
                let source = try loop.watch(fileDescriptor: pipe.readEnd, for: .read, inModes: [.default]) { _ in
                    calls.append(index)
                    // Whichever runs first cancels the other, which is ready in the same turn.
                    let all = sources.withLock { $0 }
                    all[1 - index].cancel()
                }
                sources.withLock { $0.append(source) }
            }
            for pipe in pipes { pipe.write(1) } // both ready before the run: one turn reports both
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(calls.count == 1)
            // The survivor is still ready (level-triggered, unread): it runs again; the other never.
            let survivor = calls.values[0]
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(calls.values == [survivor, survivor])
            for source in sources.withLock({ $0 }) { source.cancel() }
        }
    }

    @Test func manyReadyFdsAreEachHandledAtMostOncePerTurnAndNoneStarves() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let pipes = (0..<500).map { _ in Pipe2() }
            let calls = Locked<[Int]>(Array(repeating: 0, count: pipes.count))
            var sources: [FileDescriptorSource] = []
            for (index, pipe) in pipes.enumerated() {
                sources.append(try loop.watch(fileDescriptor: pipe.readEnd, for: .read, inModes: [.default]) { _ in
                    calls.withLock { $0[index] += 1 } // never reads: stays ready
                })
            }
            for pipe in pipes { pipe.write(1) }
            // epoll reports a bounded number of ready fds per wait (libevent grows the batch), and
            // rotates through them: each run below handles a turn's worth, each fd at most once,
            // and within a few runs every fd has been handled: none starves.
            var runs = 0
            while calls.withLock({ $0.contains(0) }) && runs < 50 {
                let before = calls.withLock { $0 }
                _ = loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: true)
                let after = calls.withLock { $0 }
                #expect(zip(before, after).allSatisfy { $1 - $0 <= 1 }, "a handler ran twice in one turn")
                runs += 1
            }
            #expect(calls.withLock { !$0.contains(0) }, "some ready fd was never handled in \(runs) runs")
            for source in sources { source.cancel() }
        }
    }

    @Test func aBusyFdDoesNotStarveQueuedWorkOrTimers() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let pipe = Pipe2()
            pipe.write(1) // always ready
            let source = try loop.watch(fileDescriptor: pipe.readEnd, for: .read, inModes: [.default]) { _ in }
            let done = Locked<Set<String>>([])
            loop.perform(inModes: [.default]) { done.withLock { _ = $0.insert("perform") } }
            loop.add(RunLoopTimer(fireAt: Date(timeIntervalSinceNow: 0.01)) { _ in done.withLock { _ = $0.insert("timer") } },
                     forMode: .default)
            let port = MessagePort()
            port.setHandler { _ in done.withLock { _ = $0.insert("port") } }
            loop.add(port, forMode: .default)
            #expect(port.send(before: .distantFuture, msgid: 1))
            let end = Date(timeIntervalSinceNow: 10)
            while done.withLock({ $0.count }) < 3 && Date() < end {
                loop.run(mode: .default, before: Date(timeIntervalSinceNow: 1))
            }
            #expect(done.withLock { $0 } == ["perform", "timer", "port"])
            source.cancel()
        }
    }
}
