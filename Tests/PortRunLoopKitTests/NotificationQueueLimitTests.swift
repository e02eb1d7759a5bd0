import Foundation
import Logging
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `ThreadNotificationCenter.queuedDeliveryLimit`: with a limit, a thread whose loop does not drain
/// its deliveries (blocked, or never run) holds at most that many, and the rest are counted and
/// logged; without one (the default) nothing is dropped and a pile-up is reported once.
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

    @Test func withoutALimitNothingIsDroppedAndAPileUpIsReportedOnce() throws {
        let recorder = LogRecorder()
        let center = ThreadNotificationCenter(logger: recorder.logger)
        #expect(center.queuedDeliveryLimit == nil)
        let observer = try RunLoopThread(name: "pile-up-observer")
        defer { observer.stop() }
        let seen = Locked(0)
        let token = center.addObserver(forName: .init("piling"), on: observer.loop) { _ in seen.withLock { $0 += 1 } }
        let count = ThreadNotificationCenter.pileUpWarningThreshold + 10
        let release = holdLoop(observer) // a burst to a thread that is behind
        for _ in 0..<count { center.post(name: .init("piling")) }
        let warnings = recorder.entries.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?[LogKeys.loop] == "pile-up-observer")
        release.fire()
        try observer.loop.performAndWait {}
        #expect(seen.withLock { $0 } == count)
        #expect(center.queue(for: observer.loop).metrics.discarded == 0)
        withExtendedLifetime(token) {}
    }

    @Test func aLimitBelowOneIsRefused() async {
        await #expect(processExitsWith: .failure) {
            _ = ThreadNotificationCenter(queuedDeliveryLimit: 0)
        }
    }
}
