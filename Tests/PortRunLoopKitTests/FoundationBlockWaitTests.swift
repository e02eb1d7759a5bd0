import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Waiting for a Foundation observer block from inside it: the waiter's own call is not waited for,
/// and the wait ends as soon as the calls of other threads have left (not only when every call,
/// its own included, has).
@Suite(.timeLimit(.minutes(1))) struct FoundationBlockWaitTests {
    /// The calling thread's kernel id.
    static func currentTID() -> Int32? {
        // "/proc/thread-self" links to "<pid>/task/<tid>".
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))
            .flatMap { $0.split(separator: "/").last }.flatMap { Int32($0) }
    }

    /// True once thread `tid` of this process is asleep (state `S` in /proc), polled with a bound.
    static func waitUntilAsleep(_ tid: Int32, seconds: Double = 20) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if let stat = try? String(contentsOfFile: "/proc/self/task/\(tid)/stat", encoding: .utf8),
               let close = stat.lastIndex(of: ")") {
                let state = stat[stat.index(close, offsetBy: 2)]
                if state == "S" { return true }
            }
            sched_yield()
        }
        return false
    }

    @Test func waitInsideTheBlockEndsWhenTheOtherThreadLeaves() throws {
        let foundation = NotificationCenter()
        let center = ThreadNotificationCenter()
        let waiterThread = try RunLoopThread(name: "fbw-waiter")
        let otherThread = try RunLoopThread(name: "fbw-other")
        defer { waiterThread.stop(); otherThread.stop() }
        let bridge = center.bridge(from: foundation, name: .notifTestA)
        let otherInside = Signal()
        let releaseOther = Signal()
        let waiterTID = Locked<Int32?>(nil)
        let waitResult = Locked<(returned: Bool, seconds: Double)?>(nil)
        let waited = Signal()
        // Inline observers of the re-post, one per thread: the bridge's block runs on each poster.
        // Each observes its own thread's posts only (by sender), so each runs inside the block.
        let onOther = center.addObserver(forName: .notifTestA, object: "other", on: otherThread.loop) { _ in
            otherInside.fire()
            _ = releaseOther.wait()
        }
        let onWaiter = center.addObserver(forName: .notifTestA, object: "waiter", on: waiterThread.loop) { _ in
            let tid = Self.currentTID()
            waiterTID.withLock { $0 = tid }
            let start = Date()
            let returned = bridge.removeAndWait(timeout: .seconds(10))
            waitResult.withLock { $0 = (returned, Date().timeIntervalSince(start)) }
            waited.fire()
        }
        otherThread.loop.perform { foundation.post(name: .notifTestA, object: "other") }
        #expect(otherInside.wait()) // the other thread is inside the block (and its observer)
        waiterThread.loop.perform { foundation.post(name: .notifTestA, object: "waiter") }
        // Release the other thread's call once the waiter sleeps in its wait.
        var tid: Int32?
        let end = Date().addingTimeInterval(20)
        while tid == nil && Date() < end { tid = waiterTID.withLock { $0 }; sched_yield() }
        #expect(Self.waitUntilAsleep(try #require(tid)))
        releaseOther.fire()
        // Not a `performAndWait` on the waiter's loop: the waiting thread serves synchronous calls
        // while it waits (W4), so such a call could run before the wait ends.
        #expect(waited.wait())
        let result = try #require(waitResult.withLock { $0 })
        #expect(result.returned)
        #expect(result.seconds < 5) // not the timeout: woken when the other call left
        withExtendedLifetime((onOther, onWaiter)) {}
    }
}
