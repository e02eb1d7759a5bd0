import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Replacing a port's handler releases the old closure outside the port's lock: an object the old
/// closure held may use the port from its `deinit` (here: invalidate it) without deadlocking.
@Suite(.timeLimit(.minutes(1))) struct PortHandlerReplacementTests {
    private final class InvalidatesOnDeinit: Sendable {
        let port: MessagePort
        init(_ port: MessagePort) { self.port = port }
        deinit { port.invalidate() }
    }

    @Test func aReleasedHandlerMayUseThePortFromADeinit() throws {
        let port = MessagePort()
        let done = Signal()
        let thread = Thread {
            do {
                let guardian = InvalidatesOnDeinit(port)
                port.setHandler { _ in withExtendedLifetime(guardian) {} }
            }
            port.setHandler(nil) // drops the last reference to `guardian`: its deinit invalidates
            done.fire()
        }
        thread.start()
        #expect(done.wait(seconds: 10), "setHandler deadlocked on the port's own lock")
        #expect(!port.isValid)
    }
}
