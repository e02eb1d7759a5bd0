import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Posts from many threads at once, which the transport sends in batches from its loop: none is
/// lost, each poster's order is kept, and the counts are exact.
@Suite(.timeLimit(.minutes(1))) struct BusPostBatchingTests {
    @Test func fourThreadsPostingTwentyFiveHundredEachLoseNothingAndKeepTheirOrder() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let posters = 4, perPoster = 2_500
        let seen = Collector<[Int]>()
        let observation = try fixture.center.addObserver(forName: .init("batch.post"), on: fixture.thread.loop) { note in
            seen.append([note.userInfo?["poster"] as? Int ?? -1, note.userInfo?["seq"] as? Int ?? -1])
        }
        defer { observation.remove() }
        let failures = Collector<String>()
        let done = DispatchGroup()
        for poster in 0..<posters {
            done.enter()
            Thread.detachNewThread { [center = fixture.center] in
                defer { done.leave() }
                for seq in 0..<perPoster {
                    do {
                        try center.post(name: .init("batch.post"), userInfo: ["poster": poster, "seq": seq])
                    } catch {
                        failures.append("\(poster)/\(seq): \(error)")
                    }
                }
            }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(failures.values.isEmpty)
        #expect(seen.wait(for: posters * perPoster, seconds: 30))
        var next = [Int](repeating: 0, count: posters)
        var outOfOrder = 0
        for pair in seen.values {
            guard pair[0] >= 0, pair[0] < posters else { outOfOrder += 1; continue }
            if pair[1] != next[pair[0]] { outOfOrder += 1 }
            next[pair[0]] = pair[1] + 1
        }
        #expect(outOfOrder == 0)
        #expect(next == [Int](repeating: perPoster, count: posters))
        // The center counts deliveries after the handlers return: one more round trip through the
        // bus (a notification of its own, counted as received before it is delivered) makes the
        // batch's counts final; the round trip's own delivery may not be counted yet.
        try fixture.sync()
        let metrics = fixture.center.metrics
        #expect(metrics.posted == posters * perPoster + 1)
        #expect(metrics.received == posters * perPoster + 1)
        #expect((posters * perPoster)...(posters * perPoster + 1) ~= metrics.delivered)
    }

    @Test func aPostOnTheLoopThreadGoesOutAfterThoseQueuedBeforeIt() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("batch.order"), on: fixture.thread.loop) { note in
            seen.append(note.userInfo?["seq"] as? Int ?? -1)
        }
        defer { observation.remove() }
        // The loop is held busy while this thread queues three posts; the loop then posts the
        // fourth itself, before the queued batch's turn comes.
        let release = DispatchSemaphore(value: 0)
        let center = fixture.center
        fixture.thread.loop.perform {
            _ = release.wait(timeout: .now() + 20)
            try? center.post(name: .init("batch.order"), userInfo: ["seq": 3])
        }
        do {
            defer { release.signal() } // also when a post throws: the loop must not stay held
            for seq in 0..<3 { try center.post(name: .init("batch.order"), userInfo: ["seq": seq]) }
        }
        #expect(seen.wait(for: 4))
        #expect(seen.values == [0, 1, 2, 3])
    }
}
