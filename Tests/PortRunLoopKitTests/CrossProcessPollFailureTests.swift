#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A request whose thread cannot `poll` (the kernel refuses it, made to by a seccomp filter on that
/// thread) still gets its reply, looking at the socket once per pause rather than spinning through
/// failing calls until its deadline.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessPollFailureTests {
    @Test func aRequestWhosePollsFailGetsItsReplyWithoutSpinning() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let owner = try RunLoopThread(name: "poll-failure-publisher")
        defer { owner.stop() }
        let port = MessagePort()
        // The reply comes 300 ms after the request, from a timer: the requester waits that long.
        port.setHandler { message in
            let timer = RunLoopTimer(after: 0.3) { _ in
                _ = message.reply(msgid: message.msgid + 1000, before: Date(timeIntervalSinceNow: 10))
            }
            PortRunLoop.current.add(timer, forMode: .default)
        }
        owner.loop.add(port, forMode: .default)
        let published = try directory.registry.publish(port, as: "slow", on: owner.loop)
        defer { published.unpublish() }
        let outcome = try onRefusingThread(.poll(errno: ENOMEM)) { () -> (msgid: UInt32, cpu: Double, wall: Double) in
            // A thread without a loop: its request waits in `poll`.
            let remote = try directory.registry.remotePort(named: "slow")
            let cpuBefore = Self.threadCPUSeconds(), wallBefore = ContinuousClock.now
            let reply = try remote.sendRequest(msgid: 7, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
            let wall = ContinuousClock.now - wallBefore
            return (reply.msgid, Self.threadCPUSeconds() - cpuBefore,
                    Double(wall.components.seconds) + Double(wall.components.attoseconds) * 1e-18)
        }
        #expect(outcome.msgid == 1007)
        #expect(outcome.wall >= 0.25)
        // Spinning would take about the whole wait in CPU time; a look per millisecond, a few percent.
        #expect(outcome.cpu < outcome.wall / 3, "thread CPU \(outcome.cpu) s over a \(outcome.wall) s wait")
    }

    /// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`).
    static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
    }
}
