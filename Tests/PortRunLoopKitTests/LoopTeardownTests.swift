import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Synchronization
import Testing

/// A loop torn down while it still has sources: its thread exits (or its
/// RunLoopThread stops) with ports, timers and fd sources scheduled. The documented outcome:
/// ports are invalidated (sends return false, queued messages are discarded and counted), timers
/// are invalidated, fd sources are cancelled, and the loop itself is freed.
@Suite(.timeLimit(.minutes(1))) struct LoopTeardownTests {
    final class Sources: Sendable {
        let port = MessagePort(queueLimit: 10)
        let timer = RunLoopTimer(fireAt: .distantFuture) { _ in }
        let source: FileDescriptorSource
        let readEnd: Int32, writeEnd: Int32
        init(loop: PortRunLoop) throws {
            var fds: [Int32] = [0, 0]
            precondition(pipe(&fds) == 0)
            readEnd = fds[0]; writeEnd = fds[1]
            loop.add(port, forMode: .default)
            loop.add(timer, forMode: .default)
            source = try loop.watch(fileDescriptor: readEnd, for: .read) { _ in }
        }
        deinit { close(readEnd); close(writeEnd) }
    }

    private func check(_ s: Sources) {
        #expect(!s.port.isValid, "a dead loop's port must be invalidated")
        #expect(!s.port.send(before: Date()), "a send to a dead loop's port must return false")
        #expect(!s.timer.isValid, "a dead loop's timer must be invalidated")
        #expect(s.source.isCancelled, "a dead loop's fd source must be cancelled")
    }

    @Test func threadExitWithSourcesScheduled() throws {
        let (sources, weakLoop) = try JoinableThread.run { () -> (Sources, WeakLoop) in
            let loop = PortRunLoop.current
            let s = try Sources(loop: loop)
            for i in 0..<3 { _ = s.port.send(before: Date(), msgid: UInt32(i)) } // never delivered
            return (s, WeakLoop(loop))
        }
        check(sources)
        let stats = sources.port.statistics
        #expect(stats.sent == 3 && stats.delivered == 0 && stats.discarded == 3 && stats.queued == 0,
                "messages queued in a dead loop's port must be discarded and counted: \(stats)")
        #expect(weakLoop.loop == nil, "the loop must be freed once its thread exited, even while its sources live on")
    }

    @Test func runLoopThreadStopWithSourcesScheduled() throws {
        let thread = try RunLoopThread(name: "teardown")
        let sources = try Sources(loop: thread.loop)
        try thread.loop.performAndWait {} // registered
        thread.stop()
        check(sources)
    }

    @Test func loopsOfManyShortLivedThreadsAreFreed() throws {
        var weak: [WeakLoop] = []
        for _ in 0..<50 {
            weak.append(try JoinableThread.run { () -> WeakLoop in
                let loop = PortRunLoop.current
                _ = try Sources(loop: loop)
                loop.perform {} // queued, discarded at exit
                return WeakLoop(loop)
            })
        }
        #expect(weak.allSatisfy { $0.loop == nil }, "\(weak.filter { $0.loop != nil }.count) loops leaked")
    }

    @Test func aLoopWhoseObserversAndSourcesCaptureItIsFreed() throws {
        // Callouts that hold their own loop (an observer that reads its mode, a source that wakes
        // it), which only the loop holds, must not keep it alive once its thread exited: the dead
        // loop lets go of them — also of the observers it last worked out for a mode, among them
        // one removed before.
        let (weakLoop, weakCallouts) = try JoinableThread.run { () -> (WeakLoop, [WeakObject]) in
            let loop = PortRunLoop.current
            loop.add(MessagePort(), forMode: .default)
            let observer = RunLoopObserver(activities: .allActivities) { _, _ in _ = loop.currentMode }
            let removed = RunLoopObserver(activities: .entry) { _, _ in loop.wakeUp() }
            let source = RunLoopSource(perform: { _ in loop.wakeUp() })
            loop.add(observer, forMode: .default)
            loop.add(removed, forMode: .default)
            loop.add(source, forMode: .default)
            source.signal()
            loop.run(mode: .default, timeout: 0, returnAfterSourceHandled: false)
            loop.remove(removed, forMode: .default)
            return (WeakLoop(loop), [WeakObject(observer), WeakObject(removed), WeakObject(source)])
        }
        #expect(weakLoop.loop == nil, "a loop whose observers and sources capture it must be freed once its thread exited")
        #expect(weakCallouts.allSatisfy { $0.object == nil }, "the dead loop must let go of its observers and sources")
    }
}

/// A weak reference to an observer or a source, to check it was freed.
final class WeakObject: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// A weak reference to a loop, to check it was freed.
final class WeakLoop: @unchecked Sendable {
    weak var loop: PortRunLoop?
    init(_ loop: PortRunLoop) { self.loop = loop }
}
