import Foundation
import PortRunLoopKit
import PortRunLoopTestSupport
import Testing

/// ``RunLoopThreadGroup``: its threads and their names, ``RunLoopThreadGroup/next()`` in turn,
/// and a stop that stops them all.
@Suite(.timeLimit(.minutes(1))) struct RunLoopThreadGroupTests {
    @Test func itStartsNamedThreadsEachRunningItsOwnLoop() async throws {
        let group = try RunLoopThreadGroup(name: "grp", count: 3)
        defer { group.stop() }
        #expect(group.count == 3)
        #expect(group.threads.map(\.name) == ["grp-0", "grp-1", "grp-2"])
        #expect(group.loops.map(\.name) == ["grp-0", "grp-1", "grp-2"])
        #expect(Set(group.loops.map(ObjectIdentifier.init)).count == 3)
        for (thread, loop) in zip(group.threads, group.loops) {
            #expect(thread.loop === loop)
            #expect(try await loop.submit { loop.isCurrentThread && PortRunLoop.current === loop })
        }
    }

    @Test func nextHandsTheLoopsOutInTurn() throws {
        let group = try RunLoopThreadGroup(name: "turns", count: 3)
        defer { group.stop() }
        let handed = (0..<7).map { _ in group.next() }
        let expected = (0..<7).map { group.loops[$0 % 3] }
        #expect(zip(handed, expected).allSatisfy { $0 === $1 })
    }

    @Test func stopStopsEveryThreadAfterItsQueuedWork() throws {
        let group = try RunLoopThreadGroup(name: "stopping", count: 2)
        let ran = Recorder<Int>()
        for (index, loop) in group.loops.enumerated() { #expect(loop.perform { ran.append(index) }) }
        group.stop()
        #expect(group.isStopped)
        #expect(Set(ran.values) == [0, 1]) // queued before the stop: handled
        for loop in group.loops { #expect(!loop.perform {}) }
        group.stop() // idempotent
    }
}
