import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A wait for running handlers made on a loop's thread serves that loop's synchronous calls (W4):
/// a handler that needs a `performAndWait` on the waiting thread finishes, and the wait returns
/// as soon as it has, instead of both waiting out the timeout.
@Suite(.timeLimit(.minutes(1))) struct HandlersWaitServingTests {
    @Test func aHandlerThatCallsTheWaitingThreadFinishesWhileItWaits() throws {
        let waiter = try RunLoopThread(name: "hws-waiter")
        let portThread = try RunLoopThread(name: "hws-port")
        defer { waiter.stop(); portThread.stop() }
        let port = MessagePort()
        let entered = Signal()
        let servedOnWaiter = Locked(false)
        port.setHandler { _ in
            entered.fire()
            try? waiter.loop.performAndWait { servedOnWaiter.withLock { $0 = true } }
        }
        portThread.loop.add(port, forMode: .common)
        defer { port.invalidate() }
        #expect(port.send(before: .distantFuture))
        #expect(entered.wait())
        let (returned, seconds) = try waiter.loop.performAndWait { () -> (Bool, Double) in
            let start = Date()
            let returned = port.waitForRunningHandlers(timeout: .seconds(20))
            return (returned, Date().timeIntervalSince(start))
        }
        #expect(returned)
        #expect(seconds < 10) // not the timeout: the handler's call was served during the wait
        #expect(servedOnWaiter.withLock { $0 })
    }
}
