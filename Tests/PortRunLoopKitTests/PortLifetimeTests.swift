import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A loop holds the ports scheduled in it (as a CFRunLoop retains its sources) and lets go of each
/// once it is no longer scheduled there: removed from every mode, invalidated, or its loop gone.
/// The port's record of its loop registration must not keep either alive.
@Suite(.timeLimit(.minutes(1))) struct PortLifetimeTests {
    /// Schedules a port on `thread`'s loop, delivers one message through it, lets `end` end the
    /// scheduling, and returns a weak reference to the port, which nothing else holds.
    private func usedPort(on thread: RunLoopThread, end: (MessagePort) -> Void) -> WeakBox<MessagePort> {
        let port = MessagePort(queueLimit: 16)
        let box = WeakBox(port)
        let delivered = Signal()
        port.setHandler { _ in delivered.fire() }
        thread.loop.add(port, forMode: .common)
        #expect(port.send(before: .distantFuture))
        #expect(delivered.wait())
        end(port)
        return box
    }

    @Test func aPortRemovedFromEveryModeIsReleased() throws {
        let thread = try RunLoopThread(name: "lifetime-remove")
        defer { thread.stop() }
        let box = usedPort(on: thread) { thread.loop.remove($0, forMode: .common) }
        try thread.loop.performAndWait {} // the removal has reached the loop's thread
        #expect(box.value == nil)
    }

    @Test func anInvalidatedPortIsReleased() throws {
        let thread = try RunLoopThread(name: "lifetime-invalidate")
        defer { thread.stop() }
        let box = usedPort(on: thread) { $0.invalidate() }
        try thread.loop.performAndWait {}
        #expect(box.value == nil)
    }

    @Test func aPortStillScheduledWhenItsLoopStopsIsReleased() throws {
        let thread = try RunLoopThread(name: "lifetime-stop")
        let box = usedPort(on: thread) { _ in }
        thread.stop()
        #expect(box.value == nil)
    }

    @Test func aPortMovedToAnotherLoopIsHeldThereAndReleasedOnceRemovedThereToo() throws {
        let a = try RunLoopThread(name: "lifetime-move-a")
        let b = try RunLoopThread(name: "lifetime-move-b")
        defer { a.stop(); b.stop() }
        let box = usedPort(on: a) { port in
            a.loop.remove(port, forMode: .common)
            b.loop.add(port, forMode: .common)
        }
        try a.loop.performAndWait {}
        try b.loop.performAndWait {}
        #expect(box.value != nil) // `b` holds it
        if let port = box.value { b.loop.remove(port, forMode: .common) }
        try b.loop.performAndWait {}
        #expect(box.value == nil)
    }
}

/// A weak reference, to see whether anything still holds an object.
private final class WeakBox<Object: AnyObject> {
    weak var value: Object?
    init(_ value: Object) { self.value = value }
}
