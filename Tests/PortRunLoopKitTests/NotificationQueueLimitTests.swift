import Foundation
import Logging
import PortRunLoopKit
import Testing

/// `ThreadNotificationCenter.queuedDeliveryLimit`: a thread whose loop does not drain its
/// deliveries (blocked, or never run) holds at most that many; the rest are counted and logged.
@Suite(.timeLimit(.minutes(1))) struct NotificationQueueLimitTests {
    @Test func postsBeyondTheLimitAreDiscardedCountedAndLoggedOnce() throws {
        let recorder = LogRecorder()
        let center = ThreadNotificationCenter(logger: recorder.logger, queuedDeliveryLimit: 10)
        let observer = try RunLoopThread(name: "limit-observer")
        defer { observer.stop() }
        let seen = Recorder<Int>()
        let token = center.addObserver(forName: .init("limited"), on: observer.loop) { note in
            seen.append(note.userInfo?["i"] as? Int ?? -1)
        }
        let release = holdLoop(observer) // its loop drains nothing until released
        for i in 0..<50 { center.post(name: .init("limited"), userInfo: ["i": i]) }
        let metrics = center.queue(for: observer.loop).metrics
        #expect(metrics.depth == 10)
        #expect(metrics.discarded == 40)
        let warnings = recorder.entries.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        // A synchronous post at the limit is not queued either: it returns at once, undelivered.
        #expect(try center.postAndWait(name: .init("limited"), userInfo: ["i": 99], timeout: .seconds(30)) == 0)
        release.fire()
        try observer.loop.performAndWait {}
        #expect(seen.values == Array(0..<10))
        #expect(center.queue(for: observer.loop).metrics.discarded == 41)
        withExtendedLifetime(token) {}
    }

    @Test func theDefaultLimitIsGenerousAndALimitBelowOneIsRefused() async {
        #expect(ThreadNotificationCenter().queuedDeliveryLimit == ThreadNotificationCenter.defaultQueuedDeliveryLimit)
        await #expect(processExitsWith: .failure) {
            _ = ThreadNotificationCenter(queuedDeliveryLimit: 0)
        }
    }
}
