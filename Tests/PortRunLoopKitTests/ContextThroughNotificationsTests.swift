import Foundation
import PortRunLoopKit
import ServiceContextModule
import Testing
import PortRunLoopTestSupport

extension ServiceContextTests {
    /// Observers run in the poster's context: `post`, `postAndWait`, and a notification queue's
    /// `enqueue` (a coalesced notification keeps the context of the one delivered).
    @Suite(.timeLimit(.minutes(1))) struct ContextThroughNotificationsTests {
        @Test func postDeliversInThePostersContext() throws {
            let observerThread = try RunLoopThread(name: "ctx-observer")
            defer { observerThread.stop() }
            let center = ThreadNotificationCenter()
            let seen = Recorder<String>()
            let done = Signal()
            let token = center.addObserver(forName: .init("ctx"), on: observerThread.loop) { note in
                seen.append(currentTraceID() ?? "none")
                if seen.count == 2 { done.fire() }
            }
            withTrace("poster") { center.post(name: .init("ctx")) }
            center.post(name: .init("ctx"))
            #expect(done.wait())
            #expect(seen.values == ["poster", "none"])
            withExtendedLifetime(token) {}
        }

        @Test func postAndWaitDeliversInThePostersContext() throws {
            let observerThread = try RunLoopThread(name: "ctx-sync-observer")
            defer { observerThread.stop() }
            let center = ThreadNotificationCenter()
            let seen = Recorder<String>()
            let token = center.addObserver(forName: .init("ctx"), on: observerThread.loop) { _ in
                seen.append(currentTraceID() ?? "none")
            }
            let count = try withTrace("sync-poster") { try center.postAndWait(name: .init("ctx"), timeout: .seconds(30)) }
            #expect(count == 1)
            _ = try center.postAndWait(name: .init("ctx"), timeout: .seconds(30))
            #expect(seen.values == ["sync-poster", "none"])
            withExtendedLifetime(token) {}
        }

        @Test func queuedNotificationsArePostedInTheEnqueuersContext() throws {
            let queueThread = try RunLoopThread(name: "ctx-queue")
            let observerThread = try RunLoopThread(name: "ctx-queue-observer")
            defer { queueThread.stop(); observerThread.stop() }
            let center = ThreadNotificationCenter()
            let seen = Recorder<String>()
            let done = Signal()
            let record: @Sendable (String) -> @Sendable (Notification) -> Void = { whereSeen in
                { note in
                    seen.append("\(whereSeen):\(note.name.rawValue):\(currentTraceID() ?? "none")")
                    if seen.count == 4 { done.fire() }
                }
            }
            let remote = center.addObserver(forName: nil, on: observerThread.loop, using: record("remote"))
            let local = try queueThread.loop.performAndWait {
                center.addObserver(forName: nil, on: queueThread.loop, using: record("local"))
            }
            try queueThread.loop.performAndWait {
                let queue = center.queue(for: queueThread.loop)
                withTrace("asap-trace") { queue.enqueue(Notification(name: .init("asap")), postingStyle: .asap) }
                queue.enqueue(Notification(name: .init("plain")), postingStyle: .asap)
                // Posted when this block has returned, outside any context.
            }
            #expect(done.wait())
            #expect(Set(seen.values) == ["local:asap:asap-trace", "remote:asap:asap-trace",
                                         "local:plain:none", "remote:plain:none"])
            withExtendedLifetime((remote, local)) {}
        }

        @Test func aCoalescedNotificationKeepsTheContextOfTheOneDelivered() throws {
            let queueThread = try RunLoopThread(name: "ctx-coalesce")
            defer { queueThread.stop() }
            let center = ThreadNotificationCenter()
            let seen = Recorder<String>()
            let done = Signal()
            let token = try queueThread.loop.performAndWait {
                center.addObserver(forName: nil, on: queueThread.loop) { note in
                    seen.append("\(note.name.rawValue):\(currentTraceID() ?? "none")")
                    if seen.count == 2 { done.fire() }
                }
            }
            try queueThread.loop.performAndWait {
                let queue = center.queue(for: queueThread.loop)
                // An `.asap` post absorbs a later equal one: the first is delivered, in its context.
                withTrace("first") { queue.enqueue(Notification(name: .init("kept")), postingStyle: .asap) }
                withTrace("second") { queue.enqueue(Notification(name: .init("kept")), postingStyle: .asap) }
                // An `.asap` post replaces an equal idle one: the later is delivered, in its context.
                withTrace("idle") { queue.enqueue(Notification(name: .init("replaced")), postingStyle: .whenIdle) }
                withTrace("asap") { queue.enqueue(Notification(name: .init("replaced")), postingStyle: .asap) }
            }
            #expect(done.wait())
            #expect(seen.values == ["kept:first", "replaced:asap"])
            withExtendedLifetime(token) {}
        }
    }
}
