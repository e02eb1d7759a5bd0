import Foundation
import PortRunLoopKit
import Testing

private let tick = Notification.Name("NotificationStreamTests.tick")

/// A sender object (matched by identity).
private final class StreamTestSender: Sendable {}

/// The index a test notification carries.
private func index(_ note: Notification?) -> Int? { note?.userInfo?["i"] as? Int }

/// Reads up to `count` notifications' indices from `stream`, one task, in order.
private func collect(_ stream: NotificationStream, count: Int) async -> [Int] {
    var result: [Int] = []
    for await note in stream {
        result.append(index(note) ?? -1)
        if result.count == count { break }
    }
    return result
}

/// `center.notifications(named:)`: bounded buffer, overflow policies and their counts, delivery
/// from other threads, finish, cancellation, release, misuse.
@Suite(.timeLimit(.minutes(1))) struct NotificationStreamTests {
    /// Posts `count` notifications on `thread`, where the stream's observation lives, so each is
    /// in the buffer (or dropped) before `post` returns.
    private func postInline(_ center: ThreadNotificationCenter, on thread: RunLoopThread, count: Int) throws {
        try thread.loop.performAndWait {
            for i in 0..<count { center.post(name: tick, userInfo: ["i": i]) }
        }
    }

    @Test func dropNewestKeepsTheOldestAndCountsDrops() async throws {
        let thread = try RunLoopThread(name: "stream-newest")
        defer { thread.stop() }
        let center = ThreadNotificationCenter()
        let stream = center.notifications(named: tick, bufferLimit: 4, whenFull: .dropNewest, on: thread.loop)
        #expect(stream.bufferLimit == 4)
        #expect(stream.overflowPolicy == .dropNewest)
        try postInline(center, on: thread, count: 10)
        let before = stream.statistics
        #expect(before.received == 10)
        #expect(before.dropped == 6)
        #expect(before.buffered == 4)
        #expect(before.delivered == 0)
        #expect(await collect(stream, count: 4) == [0, 1, 2, 3])
        #expect(stream.statistics.delivered == 4)
        #expect(stream.statistics.dropped == 6)
    }

    @Test func dropOldestKeepsTheNewestAndCountsDrops() async throws {
        let thread = try RunLoopThread(name: "stream-oldest")
        defer { thread.stop() }
        let center = ThreadNotificationCenter()
        let stream = center.notifications(named: tick, bufferLimit: 4, whenFull: .dropOldest, on: thread.loop)
        #expect(stream.overflowPolicy == .dropOldest)
        try postInline(center, on: thread, count: 10)
        #expect(stream.statistics.dropped == 6)
        #expect(stream.statistics.buffered == 4)
        #expect(await collect(stream, count: 4) == [6, 7, 8, 9])
    }

    @Test func deliversPostsFromAnyThreadThroughTheSharedDeliveryThread() async throws {
        let center = ThreadNotificationCenter()
        let stream = center.notifications(named: tick, bufferLimit: 100)
        // postAndWait returns once the stream's observer has put the notification in the buffer.
        for i in 0..<5 { try center.postAndWait(name: tick, userInfo: ["i": i]) }
        #expect(stream.statistics.buffered == 5)
        // A consumer that waits first gets what is posted afterwards.
        let consumer = Task { await collect(stream, count: 8) }
        for i in 5..<8 { center.post(name: tick, userInfo: ["i": i]) }
        #expect(await consumer.value == Array(0..<8))
        #expect(stream.statistics.dropped == 0)
    }

    @Test func filtersByNameAndSender() async throws {
        let thread = try RunLoopThread(name: "stream-filter")
        defer { thread.stop() }
        let center = ThreadNotificationCenter()
        let sender = StreamTestSender()
        let stream = center.notifications(named: tick, object: sender, on: thread.loop)
        try thread.loop.performAndWait {
            center.post(name: tick, object: sender, userInfo: ["i": 1])
            center.post(name: tick, object: StreamTestSender(), userInfo: ["i": 2])
            center.post(name: Notification.Name("other"), object: sender, userInfo: ["i": 3])
            center.post(name: tick, object: sender, userInfo: ["i": 4])
        }
        #expect(await collect(stream, count: 2) == [1, 4])
        #expect(stream.statistics.received == 2)
    }

    @Test func finishReturnsWhatIsBufferedThenEnds() async throws {
        let thread = try RunLoopThread(name: "stream-finish")
        defer { thread.stop() }
        let center = ThreadNotificationCenter()
        let stream = center.notifications(named: tick, on: thread.loop)
        try postInline(center, on: thread, count: 3)
        stream.finish()
        try postInline(center, on: thread, count: 3) // not observed any more
        #expect(await collect(stream, count: 100) == [0, 1, 2])
        #expect(stream.statistics.received == 3)
        #expect(stream.statistics.isFinished)
        #expect(center.observationCount == 0)
    }

    @Test func cancellingTheConsumerEndsTheStream() async throws {
        let thread = try RunLoopThread(name: "stream-cancel")
        defer { thread.stop() }
        let center = ThreadNotificationCenter()
        let stream = center.notifications(named: tick, on: thread.loop)
        let consumer = Task { await collect(stream, count: 100) }
        consumer.cancel()
        #expect(await consumer.value == [])
        #expect(stream.statistics.isFinished)
        #expect(center.observationCount == 0)
        try postInline(center, on: thread, count: 2)
        #expect(stream.statistics.received == 0)
    }

    @Test func cancelledConsumerTakesWhatIsBufferedThenEnds() async throws {
        let thread = try RunLoopThread(name: "stream-cancelled")
        defer { thread.stop() }
        let center = ThreadNotificationCenter()
        let stream = center.notifications(named: tick, on: thread.loop)
        try postInline(center, on: thread, count: 3)
        let consumer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await collect(stream, count: 100)
        }
        // Cancelled before it waited: it takes what is buffered first (next() only waits, and so
        // only notices cancellation, on an empty buffer), then ends.
        #expect(await consumer.value == [0, 1, 2])
        #expect(stream.statistics.isFinished)
        #expect(center.observationCount == 0)
    }

    @Test func releasingTheStreamEndsTheObservation() throws {
        let center = ThreadNotificationCenter()
        do {
            let stream = center.notifications(named: tick)
            #expect(center.observationCount == 1)
            _ = stream
        }
        #expect(center.observationCount == 0)
    }

    @Test func zeroBufferLimitIsAProgrammerError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ThreadNotificationCenter().notifications(named: tick, bufferLimit: 0)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("bufferLimit must be at least 1"), "stderr: \(stderr)")
    }

    @Test func twoConcurrentIteratorsAreAProgrammerError() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // A bound: without the precondition both iterators would wait for ever; exiting
            // successfully then fails the expectation instead of hanging the test.
            DispatchQueue.global().asyncAfter(deadline: .now() + 20) { exit(0) }
            let stream = ThreadNotificationCenter().notifications(named: Notification.Name("never-posted"))
            let a = Task { await collect(stream, count: 1) }
            let b = Task { await collect(stream, count: 1) }
            _ = await (a.value, b.value)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("two tasks are iterating the same stream at once"), "stderr: \(stderr)")
    }
}
