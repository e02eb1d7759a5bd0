import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Testing
import PortRunLoopTestSupport

/// A port removed from all its modes of one loop may be scheduled in another at once, from any
/// thread (M1), and its messages then flow to the new loop, none lost, none twice, in order.
@Suite(.timeLimit(.minutes(1))) struct PortMoveTests {
    @Test func removeThenAddFromAThirdThreadMovesThePort() throws {
        let a = try RunLoopThread(name: "move-a")
        let b = try RunLoopThread(name: "move-b")
        defer { a.stop(); b.stop() }
        let port = MessagePort(queueLimit: 1_000)
        let seen = Recorder<(UInt32, String)>()
        port.setHandler { message in seen.append((message.msgid, Thread.current.name ?? "")) }
        a.loop.add(port, forMode: .common)
        for id in 0..<100 { #expect(port.send(before: .distantFuture, msgid: UInt32(id))) }
        // This thread is neither loop's: the removal from `a` is still queued there when `b` adds.
        a.loop.remove(port, forMode: .common)
        b.loop.add(port, forMode: .common)
        for id in 100..<200 { #expect(port.send(before: .distantFuture, msgid: UInt32(id))) }
        try a.loop.performAndWait {}
        try b.loop.performAndWait {}
        try b.loop.performAndWait {}
        let values = seen.values
        #expect(values.map(\.0) == (0..<200).map(UInt32.init))
        // Everything after the move went to `b`; `a` delivered only what it had taken before.
        let onB = values.drop { $0.1 == "move-a" }
        #expect(onB.allSatisfy { $0.1 == "move-b" })
        #expect(values.contains { $0.1 == "move-b" })
        port.invalidate()
    }

    @Test func aBatchInProgressOnTheOldLoopFinishesBeforeTheNewLoopTakesAnything() throws {
        let a = try RunLoopThread(name: "move-busy-a")
        let b = try RunLoopThread(name: "move-busy-b")
        defer { a.stop(); b.stop() }
        let port = MessagePort(queueLimit: 1_000)
        let seen = Recorder<(UInt32, String)>()
        let inFirst = Signal()
        let release = Signal()
        port.setHandler { message in
            if message.msgid == 0 {
                inFirst.fire()
                _ = release.wait()
            }
            seen.append((message.msgid, Thread.current.name ?? ""))
        }
        a.loop.add(port, forMode: .common)
        for id in 0..<10 { #expect(port.send(before: .distantFuture, msgid: UInt32(id))) }
        #expect(inFirst.wait()) // `a` took all ten and is inside the first handler
        a.loop.remove(port, forMode: .common)
        b.loop.add(port, forMode: .common)
        for id in 10..<20 { #expect(port.send(before: .distantFuture, msgid: UInt32(id))) }
        release.fire()
        try a.loop.performAndWait {}
        try b.loop.performAndWait {}
        try b.loop.performAndWait {}
        #expect(seen.values.map(\.0) == (0..<20).map(UInt32.init))
        port.invalidate()
    }

    @Test func aLoopThatShutsDownLetsGoOfAPortMovedToAnotherLoop() throws {
        let b = try RunLoopThread(name: "move-exit-b")
        defer { b.stop() }
        let port = MessagePort(queueLimit: 10)
        let seen = Recorder<(UInt32, String)>()
        port.setHandler { message in seen.append((message.msgid, Thread.current.name ?? "")) }
        try JoinableThread.run(name: "move-exit-a") {
            let old = PortRunLoop.current
            old.add(port, forMode: .default)
            #expect(port.send(before: Date(), msgid: 0)) // held: this loop never runs
            // Moved by another thread while this one runs no loop: the removal stays queued here,
            // and the loop's registration of the port stays until the loop shuts down.
            try JoinableThread.run(name: "move-exit-mover") {
                old.remove(port, forMode: .default)
                b.loop.add(port, forMode: .default)
            }
        } // the thread exits and its loop shuts down, the removal still queued
        #expect(port.isValid, "a dead loop must not invalidate a port scheduled in another loop")
        #expect(port.send(before: .distantFuture, msgid: 1))
        try b.loop.performAndWait {}
        let values = seen.values
        #expect(values.map(\.0) == [0, 1], "the held message and the later one, on the new loop")
        #expect(values.allSatisfy { $0.1 == "move-exit-b" })
        port.invalidate()
    }

    /// A handler that moves its own port to another loop: the new loop delivers the rest at once,
    /// while that handler still runs, and the old loop's thread touches nothing of the port's
    /// delivery state after it (ThreadSanitizer checks that); every message is counted once.
    @Test func aHandlerThatMovesItsOwnPortHandsTheRestToTheNewLoop() throws {
        let a = try RunLoopThread(name: "move-self-a")
        let b = try RunLoopThread(name: "move-self-b")
        defer { a.stop(); b.stop() }
        let port = MessagePort(queueLimit: 1_000)
        let seen = Recorder<(UInt32, String)>()
        let newLoopDelivers = Signal()
        port.setHandler { message in
            seen.append((message.msgid, Thread.current.name ?? ""))
            if message.msgid == 0 {
                a.loop.remove(port, forMode: .common) // on a's thread: it lets go at once
                b.loop.add(port, forMode: .common)
                _ = newLoopDelivers.wait(seconds: 30)
            } else if message.msgid == 1 {
                newLoopDelivers.fire()
            }
        }
        let release = holdLoop(a)
        a.loop.add(port, forMode: .common)
        for id in 0..<500 { #expect(port.send(before: .distantFuture, msgid: UInt32(id))) }
        release.fire()
        #expect(eventually { seen.count == 500 })
        try a.loop.performAndWait {}
        try b.loop.performAndWait {}
        let values = seen.values
        #expect(values.map(\.0) == (0..<500).map(UInt32.init))
        #expect(values.dropFirst().allSatisfy { $0.1 == "move-self-b" })
        #expect(port.statistics.delivered == 500)
        port.invalidate()
    }

    /// The thread of a loop a full port was removed from (by another thread) cannot wait for room
    /// in it: until that thread lets go, no loop takes the port's messages. Its send fails at once.
    @Test func theOldLoopsThreadCannotWaitForRoomInAPortItHasNotLetGo() throws {
        let a = try RunLoopThread(name: "move-full-a")
        let b = try RunLoopThread(name: "move-full-b")
        defer { a.stop(); b.stop() }
        let port = MessagePort(queueLimit: 1)
        port.setHandler { _ in }
        a.loop.add(port, forMode: RunLoop.Mode("never-run")) // held: the port stays full
        #expect(port.send(before: .distantFuture, msgid: 1))
        try a.loop.performAndWait {} // `a` has registered the port (and holds its message)
        let removed = Signal()
        let result = Locked<Bool?>(nil)
        a.loop.perform {
            _ = removed.wait(seconds: 30)
            result.withLock { $0 = port.send(before: .distantFuture, msgid: 2) }
        }
        // From this thread: `a`'s thread, busy in the block above, has not let go of the port.
        a.loop.remove(port, forMode: RunLoop.Mode("never-run"))
        b.loop.add(port, forMode: .default)
        removed.fire()
        try a.loop.performAndWait {}
        #expect(result.withLock { $0 } == false)
        try b.loop.performAndWait {}
        #expect(port.statistics.delivered == 1) // once `a` let go, `b` took the held message
        port.invalidate()
    }

    @Test func removeThenAddBackOnTheSameLoopKeepsItScheduled() throws {
        let a = try RunLoopThread(name: "move-back")
        defer { a.stop() }
        let port = MessagePort()
        let got = Signal()
        port.setHandler { _ in got.fire() }
        a.loop.add(port, forMode: .common)
        a.loop.remove(port, forMode: .common)
        a.loop.add(port, forMode: .common)
        try a.loop.performAndWait {}
        #expect(port.send(before: .distantFuture, msgid: 1))
        #expect(got.wait(seconds: 5))
        port.invalidate()
    }
}
