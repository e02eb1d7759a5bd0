import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// Posts from several threads at once are batched into the center's loop (one wake-up and one
/// write per batch): against a real redis-server, nothing is lost and each poster's order is kept.
@Suite(.timeLimit(.minutes(2))) struct RedisPostBatchingTests {
    @Test func aBurstOfTenThousandFromFourThreadsArrivesWholeInEachPostersOrder() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let threads = 4, perThread = 2_500
        let seen = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("burst"), on: fixture.thread.loop) { note in
            let poster = note.userInfo?["poster"] as? Int ?? -1
            let seq = note.userInfo?["seq"] as? Int ?? -1
            seen.append(poster * 1_000_000 + seq)
        }
        let failures = PortRunLoopTestSupport.Locked<[String]>([])
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let center = fixture.center
        for poster in 0..<threads {
            done.enter()
            Thread {
                defer { done.leave() }
                start.wait()
                for seq in 0..<perThread {
                    do {
                        try center.post(name: .init("burst"), userInfo: ["poster": poster, "seq": seq])
                    } catch {
                        failures.withLock { $0.append("\(poster)/\(seq): \(error)") }
                    }
                }
            }.start()
        }
        for _ in 0..<threads { start.signal() }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(seen.wait(for: threads * perThread, seconds: 60))
        let values = seen.values
        #expect(values.count == threads * perThread)
        for poster in 0..<threads {
            let sequence = values.filter { $0 / 1_000_000 == poster }.map { $0 % 1_000_000 }
            #expect(sequence == Array(0..<perThread), "poster \(poster)")
        }
        try fixture.center.flushRedisPosts(timeout: .seconds(20))
        #expect(fixture.center.redisMetrics?.published == threads * perThread)
        #expect(fixture.center.redisMetrics?.droppedWhileDisconnected == 0)
        observation.remove()
    }

    @Test func postsQueuedByOtherThreadsGoOutBeforeALaterPostOnTheLoopThread() throws {
        let fixture = try RedisFixture()
        defer { fixture.shutDown() }
        let seen = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("order"), on: fixture.thread.loop) { note in
            seen.append(note.userInfo?["seq"] as? Int ?? -1)
        }
        let center = fixture.center
        let count = 1_000
        // Park the loop, post from this thread (queued), then post on the loop once it runs again.
        let parked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        fixture.thread.loop.perform {
            parked.signal()
            _ = release.wait(timeout: .now() + 20)
            try? center.post(name: .init("order"), userInfo: ["seq": count])
        }
        #expect(parked.wait(timeout: .now() + 10) == .success)
        do {
            defer { release.signal() } // also when a post throws: the loop must not stay held
            for seq in 0..<count { try center.post(name: .init("order"), userInfo: ["seq": seq]) }
        }
        #expect(seen.wait(for: count + 1))
        #expect(seen.values == Array(0...count))
        observation.remove()
    }
}
