import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `MessagePort.setInvalidationHandler(on:_:)` on local ports: called once, on the port's loop
/// (or the given one), with the reason; at once when set on an invalid port; never after removal.
struct MessagePortInvalidationHandlerTests {
    @Test func invalidatingALocalPortRunsItsHandlerOnceOnItsLoop() throws {
        let thread = try RunLoopThread(name: "invalidation-owner")
        defer { thread.stop() }
        let port = MessagePort()
        port.setHandler { _ in }
        thread.loop.add(port, forMode: .default)
        let reasons = Recorder<MessagePort.InvalidationReason>()
        let onLoop = Recorder<Bool>()
        let loop = thread.loop
        port.setInvalidationHandler { reason in
            reasons.append(reason)
            onLoop.append(loop.isCurrentThread)
        }
        port.invalidate()
        port.invalidate()
        try thread.loop.performAndWait {} // the handler was queued before this block
        #expect(reasons.values == [.invalidated])
        #expect(onLoop.values == [true])
    }

    @Test func aHandlerSetOnAnInvalidPortRunsAtOnce() throws {
        let port = MessagePort() // in no loop: the handler runs on the thread that sets it
        port.invalidate()
        let reasons = Recorder<MessagePort.InvalidationReason>()
        port.setInvalidationHandler { reasons.append($0) }
        #expect(reasons.values == [.invalidated])

        let thread = try RunLoopThread(name: "invalidation-late")
        defer { thread.stop() }
        let onLoop = Recorder<Bool>()
        let called = Signal()
        let loop = thread.loop
        port.setInvalidationHandler(on: thread.loop) { _ in
            onLoop.append(loop.isCurrentThread)
            called.fire()
        }
        #expect(called.wait(seconds: 10))
        #expect(onLoop.values == [true])
    }

    @Test func aRemovedOrReplacedHandlerIsNotCalled() {
        let port = MessagePort()
        let first = Recorder<MessagePort.InvalidationReason>()
        let second = Recorder<MessagePort.InvalidationReason>()
        port.setInvalidationHandler { first.append($0) }
        port.setInvalidationHandler(nil)
        port.invalidate()
        #expect(first.count == 0)

        let other = MessagePort()
        other.setInvalidationHandler { first.append($0) }
        other.setInvalidationHandler { second.append($0) }
        other.invalidate()
        #expect(first.count == 0)
        #expect(second.values == [.invalidated])
    }

    @Test func theLoopsShutdownRunsTheHandlerOfAPortScheduledThere() throws {
        let thread = try RunLoopThread(name: "invalidation-shutdown")
        let port = MessagePort()
        thread.loop.add(port, forMode: .default)
        try thread.loop.performAndWait {} // scheduled
        let reasons = Recorder<MessagePort.InvalidationReason>()
        let called = Signal()
        port.setInvalidationHandler { reason in
            reasons.append(reason)
            called.fire()
        }
        thread.stop()
        #expect(called.wait(seconds: 10))
        #expect(reasons.values == [.invalidated])
        #expect(!port.isValid)
    }
}
