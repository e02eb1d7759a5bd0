import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// The daemon killed mid-stream: an observable state and typed errors, never a hang.
@Suite(.timeLimit(.minutes(1))) struct BusDisconnectTests {
    @Test func killingTheDaemonMidStreamIsReportedAndLaterCallsThrow() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let received = Collector<Int>()
        let lost = Collector<BusNotificationError>()
        let observation = try fixture.center.addObserver(forName: .init("stream"), on: fixture.thread.loop) { note in
            received.append(note.userInfo?["n"] as? Int ?? -1)
        }
        let disconnection = fixture.center.addDisconnectionObserver(on: fixture.thread.loop) { lost.append($0) }
        // A poster that posts until the center refuses.
        let posterEnded = Collector<BusNotificationError>()
        let center = fixture.center
        Thread.detachNewThread {
            var n = 0
            while true {
                do throws(BusNotificationError) {
                    try center.post(name: .init("stream"), userInfo: ["n": n])
                } catch {
                    posterEnded.append(error)
                    return
                }
                n += 1
            }
        }
        #expect(received.wait(for: 100))
        fixture.bus.kill()
        #expect(lost.wait(for: 1, seconds: 10))
        #expect(lost.values == [.disconnected])
        #expect(!fixture.center.isConnected)
        #expect(posterEnded.wait(for: 1, seconds: 10))
        #expect(posterEnded.values == [.disconnected])
        #expect(throws: BusNotificationError.disconnected) {
            _ = try fixture.center.addObserver(forName: .init("after"), on: fixture.thread.loop) { _ in }
        }
        #expect(throws: BusNotificationError.disconnected) { try fixture.center.post(name: .init("after")) }
        // What was received kept its order.
        let values = received.values
        #expect(values == Array(0..<values.count))
        // A disconnection observer added afterwards hears at once.
        let late = Collector<BusNotificationError>()
        let lateObservation = fixture.center.addDisconnectionObserver(on: fixture.thread.loop) { late.append($0) }
        #expect(late.wait(for: 1))
        observation.remove(); disconnection.remove(); lateObservation.remove()
    }
}

/// Posts libdbus could not write when the bus went away are dropped with the connection: the
/// center counts every one of them as discarded unsent, and only those.
@Suite(.timeLimit(.minutes(1))) struct BusPostsOnALostConnectionTests {
    @Test func postsTheDeadBusNeverGotAreCountedAsDiscarded() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let center = fixture.center
        let posted = try fixture.thread.loop.performAndWait(timeout: .seconds(10)) { () -> Int in
            // On the loop's thread nothing reads the end of the stream until this block returns:
            // the center still counts itself connected, and libdbus takes the posts.
            fixture.bus.kill()
            var accepted = 0
            for n in 0..<3 {
                do throws(BusNotificationError) {
                    try center.post(name: .init("into.the.void"), userInfo: ["n": n])
                    accepted += 1
                } catch {}
            }
            return accepted
        }
        #expect(posted == 3)
        #expect(eventually { !center.isConnected })
        #expect(center.metrics.postsDiscardedUnsent == 3, "\(center.metrics)")
    }

    /// Posts the bus received are not counted as discarded when it goes away later.
    @Test func postsWrittenBeforeTheLossAreNotCounted() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let center = fixture.center
        for n in 0..<3 { try center.post(name: .init("delivered"), userInfo: ["n": n]) }
        try fixture.sync()
        fixture.bus.kill()
        #expect(eventually { !center.isConnected })
        #expect(center.metrics.postsDiscardedUnsent == 0, "\(center.metrics)")
    }
}
