import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `waitForRunningHandlers` called on the loop's thread from inside the port's own delivery never
/// waits for itself: not after `invalidate()`, not after the port left its last mode, and not in a
/// nested run that continues the port's batch.
@Suite(.timeLimit(.minutes(1))) struct PortWaitInsideHandlerTests {
    /// Runs `inside` from the port's handler on a fresh loop and returns what it returned and how
    /// long it took.
    private func fromHandler(_ inside: @escaping @Sendable (MessagePort, PortRunLoop) -> Bool) throws -> (Bool, Double) {
        try onFreshThread {
            let loop = PortRunLoop.current
            let port = MessagePort()
            let outcome = Locked<(Bool, Double)?>(nil)
            port.setHandler { message in
                guard message.msgid == 1 else { return }
                let start = Date()
                let result = inside(port, loop)
                outcome.withLock { $0 = (result, Date().timeIntervalSince(start)) }
            }
            loop.add(port, forMode: .default)
            #expect(port.send(before: .distantFuture, msgid: 1))
            #expect(port.send(before: .distantFuture, msgid: 2))
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: 5))
            port.invalidate()
            return try #require(outcome.withLock { $0 })
        }
    }

    @Test func afterInvalidatingItsOwnPort() throws {
        let (result, elapsed) = try fromHandler { port, _ in
            port.invalidate()
            return port.waitForRunningHandlers(timeout: .seconds(2))
        }
        #expect(result)
        #expect(elapsed < 1)
    }

    @Test func afterRemovingItsPortFromItsLastMode() throws {
        let (result, elapsed) = try fromHandler { port, loop in
            loop.remove(port, forMode: .default)
            return port.waitForRunningHandlers(timeout: .seconds(2))
        }
        #expect(result)
        #expect(elapsed < 1)
    }

    @Test func inANestedRunThatContinuesTheBatch() throws {
        let (result, elapsed) = try fromHandler { port, loop in
            // The nested run delivers message 2 (the rest of the batch); its handler ignores it.
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: -1))
            port.invalidate()
            return port.waitForRunningHandlers(timeout: .seconds(2))
        }
        #expect(result)
        #expect(elapsed < 1)
    }
}
