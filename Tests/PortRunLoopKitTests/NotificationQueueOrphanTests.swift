import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A `ThreadNotificationQueue` outliving its center: `.asap` and `.whenIdle` posts still waiting
/// when the center goes away cannot be posted, and are counted as discarded, not delivered.
@Suite(.timeLimit(.minutes(1)))
struct NotificationQueueOrphanTests {
    @Test func postsWaitingWhenTheCenterGoesAwayCountAsDiscarded() throws {
        let thread = try RunLoopThread(name: "tnq-orphan")
        defer { thread.stop() }
        let centerGone = Locked(false)
        let queue = try thread.loop.performAndWait { () -> ThreadNotificationQueue in
            var center: ThreadNotificationCenter? = ThreadNotificationCenter()
            weak let weakCenter = center
            let queue = center!.queue(for: thread.loop)
            queue.enqueue(Notification(name: .notifTestA), postingStyle: .asap)
            queue.enqueue(Notification(name: .notifTestB), postingStyle: .whenIdle)
            center = nil // the queue holds its center weakly
            centerGone.withLock { $0 = weakCenter == nil }
            return queue
        }
        try #require(centerGone.withLock { $0 }, "nothing else should hold the center")
        // The `.asap` flush runs on a later turn; the `.whenIdle` post when the loop is next about
        // to sleep, which it soon is (nothing else is queued).
        #expect(eventually(seconds: 10) { queue.metrics.discarded == 2 })
        #expect(queue.metrics.delivered == 0)
    }
}
