import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// What a `NotificationRedirector` does with notifications it can never handle: after its target
/// loop shut down it queues nothing (it is invalid and counts them), and `invalidate()` counts and
/// logs those still waiting.
@Suite(.timeLimit(.minutes(1)))
struct NotificationRedirectorDiscardTests {
    @Test func aRedirectorWhoseLoopShutDownQueuesNothingAndCountsWhatItGets() throws {
        let target = try RunLoopThread(name: "redir-gone")
        let handled = NotifCountdown()
        let redirector = NotificationRedirector(loop: target.loop) { _ in handled.add() }
        #expect(redirector.isValid)
        target.stop() // shuts the loop down, which invalidates the port
        #expect(!redirector.port.isValid)
        #expect(!redirector.isValid)
        for _ in 0..<100 { redirector.process(Notification(name: .notifTestA)) }
        #expect(redirector.pendingCount == 0, "nothing is kept for a loop that will never drain it")
        #expect(redirector.discardedCount == 100)
        #expect(handled.value == 0)
        redirector.invalidate()
        #expect(redirector.discardedCount == 100)
    }

    /// Notifications still waiting when the target loop shuts down are dropped and counted then,
    /// as ``NotificationRedirector/invalidate()`` drops them.
    @Test func notificationsWaitingWhenTheLoopShutsDownAreCounted() throws {
        let target = try RunLoopThread(name: "redir-shutdown")
        let handled = NotifCountdown()
        // A mode the loop never runs: the notifications wait.
        let redirector = NotificationRedirector(loop: target.loop, modes: [RunLoop.Mode("redir.never")]) { _ in handled.add() }
        for _ in 0..<3 { redirector.process(Notification(name: .notifTestA)) }
        #expect(redirector.pendingCount == 3)
        target.stop()
        #expect(!redirector.isValid)
        #expect(redirector.pendingCount == 0)
        #expect(redirector.discardedCount == 3)
        #expect(handled.value == 0)
    }

    @Test func invalidatingWithNotificationsWaitingCountsAndLogsThem() throws {
        let recorder = LogRecorder()
        let target = try RunLoopThread(name: "redir-waiting", logger: recorder.logger)
        defer { target.stop() }
        let handled = NotifCountdown()
        let redirector = NotificationRedirector(loop: target.loop) { _ in handled.add() }
        let release = holdLoop(target)
        for _ in 0..<3 { redirector.process(Notification(name: .notifTestA)) }
        #expect(redirector.pendingCount == 3)
        redirector.invalidate()
        release.fire()
        try target.loop.performAndWait { }
        #expect(handled.value == 0)
        #expect(redirector.pendingCount == 0)
        #expect(redirector.discardedCount == 3)
        let entries = recorder.entries.filter { $0.message.contains("NotificationRedirector invalidated") }
        #expect(entries.count == 1)
        #expect(entries.first?.level == .notice)
        #expect(entries.first?["portrunloop.discarded"] == "3")
        #expect(entries.first?["portrunloop.loop"] == "redir-waiting")
    }
}
