import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// An observation whose loop has shut down can never be called again: its next delivery is
/// refused and counted, and the observation ends (logged once). Posts a transport had to release
/// unsent are counted and logged by the center.
@Suite(.timeLimit(.minutes(1))) struct BusObservationLoopShutdownTests {
    @Test func anObservationOnAStoppedThreadEndsAtItsNextDelivery() throws {
        let recorder = LogRecorder()
        let fixture = try BusFixture(logger: recorder.logger)
        defer { fixture.shutDown() }
        let observerThread = try RunLoopThread(name: "bus-observer-gone")
        let handled = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("gone.loop"), on: observerThread.loop) { _ in
            handled.append(1)
        }
        try fixture.center.post(name: .init("gone.loop"))
        #expect(handled.wait(for: 1))
        observerThread.stop()
        try fixture.center.post(name: .init("gone.loop"))
        try fixture.sync()
        #expect(!observation.isActive)
        #expect(fixture.center.metrics.refusedByShutDownLoops == 1)
        try fixture.center.post(name: .init("gone.loop"))
        try fixture.sync()
        #expect(fixture.center.metrics.refusedByShutDownLoops == 1, "an ended observation is not offered more")
        #expect(handled.values.count == 1)
        let entries = recorder.entries.filter { $0.message.contains("an observation's loop has shut down") }
        #expect(entries.count == 1)
        #expect(entries.first?["portrunloop.loop"] == "bus-observer-gone")
    }

    @Test func postsDiscardedUnsentAreCountedAndLogged() throws {
        let recorder = LogRecorder()
        let fixture = try BusFixture(logger: recorder.logger)
        defer { fixture.shutDown() }
        fixture.center.transportDiscardedUnsent(count: 3)
        fixture.center.transportDiscardedUnsent(count: 0)
        #expect(fixture.center.metrics.postsDiscardedUnsent == 3)
        let entries = recorder.entries.filter { $0.message.contains("discarded unsent") }
        #expect(entries.count == 1)
        #expect(entries.first?["portrunloop.discarded"] == "3")
    }
}
