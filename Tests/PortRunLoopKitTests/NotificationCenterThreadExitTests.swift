import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Testing
import PortRunLoopTestSupport

/// A ``ThreadNotificationCenter`` and threads that come and go: a thread's queue, and with it the
/// thread's loop and the loop's descriptors, is let go of when the thread exits, whether its
/// observations ended with it or outlive it.
@Suite(.timeLimit(.minutes(1)))
struct NotificationCenterThreadExitTests {
    /// Starts `count` threads, one after another; each observes `name` on its own loop (and posts
    /// it once, delivered inline), hands `keep` its token, and exits. Returns the threads' loops,
    /// weakly.
    private static func observeOnThreadsThatExit(_ center: ThreadNotificationCenter, count: Int, name: Notification.Name,
                                                 keep: @escaping @Sendable (NotificationObservation) -> Void) -> [WeakLoop] {
        let loops = Locked<[WeakLoop]>([])
        for i in 0..<count {
            let thread = JoinableThread(name: "center-exit-\(i)") {
                let delivered = Locked(0)
                let token = center.addObserver(forName: name) { _ in delivered.withLock { $0 += 1 } }
                center.post(name: name)
                precondition(delivered.withLock { $0 } == 1, "the thread's own observer is called inline")
                loops.withLock { $0.append(WeakLoop(PortRunLoop.current)) }
                keep(token)
            }
            thread.join()
        }
        return loops.withLock { $0 }
    }

    @Test func theQueuesOfThreadsThatExitedAreLetGo() {
        let center = ThreadNotificationCenter()
        let name = Notification.Name("NotificationCenterThreadExitTests.exited")
        let loops = Self.observeOnThreadsThatExit(center, count: 50, name: name) { _ in } // the token ends with the thread
        #expect(center.loopsWithQueues == 0)
        #expect(loops.count == 50)
        #expect(loops.filter { $0.loop != nil }.count == 0, "the loops of exited threads are freed")
        center.post(name: name)
        #expect(center.observationCount == 0)
    }

    @Test func observationsKeptPastTheirThreadHoldOnlyTheirOwnLoop() throws {
        let center = ThreadNotificationCenter()
        let name = Notification.Name("NotificationCenterThreadExitTests.kept")
        let tokens = Locked<[NotificationObservation]>([])
        let loops = Self.observeOnThreadsThatExit(center, count: 50, name: name) { token in tokens.withLock { $0.append(token) } }
        #expect(center.loopsWithQueues == 0, "the center keeps no queue of a thread that exited")
        #expect(center.observationCount == 0)
        #expect(tokens.withLock { $0.allSatisfy { !$0.isActive } })
        // A post that reaches them queues nothing for a dead thread: it ends them.
        center.post(name: name)
        #expect(center.loopsWithQueues == 0)
        tokens.withLock { $0.removeAll() }
        #expect(loops.filter { $0.loop != nil }.count == 0, "the loops of exited threads are freed with the last token")
    }

    /// In a process of its own (no other test opens or closes descriptors meanwhile): threads that
    /// observe and exit leave the process with the descriptors it had before them.
    @Test func threadsThatComeAndGoLeaveNoDescriptorsBehind() async {
        await #expect(processExitsWith: .success) {
            func openDescriptors() -> Int {
                ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
            }
            let center = ThreadNotificationCenter()
            let name = Notification.Name("NotificationCenterThreadExitTests.descriptors")
            // A loop on a thread of its own first, without the center: whatever the process opens
            // once (libevent, the runtime's dispatch queues) is open before the count is taken.
            let warmUp = JoinableThread(name: "center-exit-warm-up") {
                let loop = PortRunLoop.current
                loop.perform {}
                _ = loop.run(mode: .default, before: .distantPast)
            }
            warmUp.join()
            let before = openDescriptors()
            _ = NotificationCenterThreadExitTests.observeOnThreadsThatExit(center, count: 50, name: name) { _ in }
            center.post(name: name)
            let after = openDescriptors()
            guard after == before else {
                FileHandle.standardError.write(Data("descriptors before: \(before), after: \(after)\n".utf8))
                exit(1)
            }
        }
    }
}
