import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A handler running on the center's own loop (inside the connection's dispatch) may observe,
/// and post (its `AddMatch` round trip runs inside the dispatch).
@Suite(.timeLimit(.minutes(1))) struct BusReentrantHandlerTests {
    @Test func aHandlerOnTheCentersLoopMayObservePostAndRemove() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let center = fixture.center
        let loop = fixture.thread.loop
        let seen = Collector<String>()
        let inner = PortRunLoopTestSupport.Locked<BusObservation?>(nil)
        let outer = try center.addObserver(forName: .init("reentrant.first"), on: loop) { _ in
            do {
                let observation = try center.addObserver(forName: .init("reentrant.second"), on: loop) { note in
                    seen.append(note.name.rawValue)
                }
                inner.withLock { $0 = observation }
                try center.post(name: .init("reentrant.second"))
                seen.append("first")
            } catch {
                seen.append("error \(error)")
            }
        }
        try center.post(name: .init("reentrant.first"))
        #expect(seen.wait(for: 2))
        #expect(seen.values == ["first", "reentrant.second"])
        outer.remove()
        inner.withLock { $0?.remove() }
    }
}
