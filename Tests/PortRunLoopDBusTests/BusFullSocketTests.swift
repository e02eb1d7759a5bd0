import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A burst larger than the connection's socket takes (the daemon is stopped meanwhile): libdbus holds the post it could not write
/// whole and the later ones wait behind it, so that a loss could count them. Once the socket
/// drains they all go, in post order, none counted as discarded.
@Suite(.timeLimit(.minutes(1))) struct BusFullSocketTests {
    @Test func aBurstThatFillsTheSocketIsSentWholeAndInOrder() throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let count = 2_000
        let padding = String(repeating: "x", count: 4_096) // 8 MB in all: far more than a socket buffer
        let seen = Collector<Int>()
        let observation = try fixture.center.addObserver(forName: .init("full.socket"), on: fixture.thread.loop) { note in
            seen.append(note.userInfo?["n"] as? Int ?? -1)
        }
        defer { observation.remove() }
        let center = fixture.center
        // The daemon stopped (SIGSTOP) reads nothing: the socket fills within the first posts.
        kill(fixture.bus.pid, SIGSTOP)
        defer { kill(fixture.bus.pid, SIGCONT) }
        try fixture.thread.loop.performAndWait(timeout: .seconds(20)) {
            for n in 0..<count / 2 { try center.post(name: .init("full.socket"), userInfo: ["n": n, "pad": padding]) }
        }
        // From another thread too, while the first half waits.
        for n in count / 2..<count { try center.post(name: .init("full.socket"), userInfo: ["n": n, "pad": padding]) }
        kill(fixture.bus.pid, SIGCONT)
        #expect(seen.wait(for: count, seconds: 30))
        let inOrder = seen.values.elementsEqual(0..<count)
        #expect(inOrder, "every post once, in post order")
        #expect(center.metrics.postsDiscardedUnsent == 0)
        #expect(center.isConnected)
    }
}
