import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A send from the loop's own thread to its own full port cannot wait for room (only that thread
/// makes room): it returns false at once, whatever the date, and is counted as rejected.
@Suite(.timeLimit(.minutes(1))) struct PortSelfSendTests {
    @Test func aFullPortOfTheCallersOwnLoopFailsAtOnce() throws {
        try onFreshThread {
            let loop = PortRunLoop.current
            let port = MessagePort(queueLimit: 1)
            port.setHandler { _ in }
            loop.add(port, forMode: .default)
            #expect(port.send(before: .distantFuture, msgid: 1))
            let start = Date()
            #expect(!port.send(before: .distantFuture, msgid: 2))
            #expect(Date().timeIntervalSince(start) < 1)
            #expect(port.statistics.rejected == 1)
            // The loop delivers the first message; there is room again.
            #expect(loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5)))
            #expect(port.send(before: .distantFuture, msgid: 3))
            port.invalidate()
        }
    }
}
