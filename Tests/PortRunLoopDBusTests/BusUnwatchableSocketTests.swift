#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopDBus
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A connection whose socket the loop cannot watch is lost, not unserviced: without a source on
/// the loop nothing would ever read or write it, and posts would be accepted that never go out.
@Suite(.timeLimit(.minutes(1))) struct BusUnwatchableSocketTests {
    @Test func aCenterWhoseSocketCannotBeWatchedIsDisconnectedAndSaysSo() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let thread = try RunLoopThread(name: "bus-center")
        defer { thread.stop() }
        let recorder = LogRecorder()
        // `watch` asks this epoll instance whether epoll takes an fd; the thread that opens the
        // connection (and so adds libdbus' first watch) is told no.
        let probe = try #require(System.probeEpoll())
        let endpoint = bus.endpoint
        let center = try onRefusingThread(.epollAdd(epoll: probe, errno: EPERM)) {
            try BusNotificationCenter(endpoint: endpoint, loop: thread.loop, logger: recorder.logger)
        }
        defer { center.close() }
        Self.expectLost(center, on: thread.loop)
        let warnings = recorder.entries.filter { $0.level == .warning && $0.message.contains("could not be watched") }
        #expect(warnings.count >= 1)
        #expect(warnings.first?["portrunloop.error"]?.contains("epoll refuses it") == true, "\(warnings)")
    }

    @Test func aCenterWhoseSocketItsLoopLaterRefusesIsDisconnected() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let thread = try RunLoopThread(name: "bus-center")
        defer { thread.stop() }
        // The loop's thread refuses every `epoll_ctl(EPOLL_CTL_ADD)` from now on: the watch made
        // by the opening thread passes its check there, and the loop's registration of it fails.
        try thread.loop.performAndWait(timeout: .seconds(10)) {
            try SyscallRefusal.anyEpollAdd(errno: ENOSPC).installOnCurrentThread()
        }
        let recorder = LogRecorder()
        let center = try BusNotificationCenter(endpoint: bus.endpoint, loop: thread.loop, logger: recorder.logger)
        defer { center.close() }
        Self.expectLost(center, on: thread.loop)
        #expect(recorder.entries.contains { $0.level == .warning && $0.message.contains("could not be watched") })
    }

    /// The center reports its connection lost (disconnection observers, `isConnected`, `post`).
    static func expectLost(_ center: BusNotificationCenter, on loop: PortRunLoop) {
        let lost = Collector<BusNotificationError>()
        let disconnection = center.addDisconnectionObserver(on: loop) { lost.append($0) }
        defer { disconnection.remove() }
        #expect(lost.wait(for: 1, seconds: 10))
        #expect(lost.values == [.disconnected])
        #expect(!center.isConnected)
        #expect(throws: BusNotificationError.disconnected) { try center.post(name: .init("never-sent")) }
    }
}
