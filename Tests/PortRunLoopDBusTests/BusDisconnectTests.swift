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
