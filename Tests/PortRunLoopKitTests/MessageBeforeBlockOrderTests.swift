import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// P3: a message sent before a block is queued is handled before the block runs, when its port is
/// in the running mode, also when the loop learned of the message in a run of another mode.
@Suite(.timeLimit(.minutes(1))) struct MessageBeforeBlockOrderTests {
    static let other = RunLoop.Mode("MessageBeforeBlockOrderTests.other")

    @Test func aMessageSeenInAnotherModeIsHandledBeforeALaterBlock() throws {
        let thread = try RunLoopThread(name: "p3-other-mode")
        defer { thread.stop() }
        let loop = thread.loop
        let order = Recorder<String>()
        let port = MessagePort()
        port.setHandler { _ in order.append("message") }
        loop.add(port, forMode: .default)
        let otherModeSource = MessagePort() // keeps the other mode from being empty
        loop.add(otherModeSource, forMode: Self.other)
        defer { port.invalidate(); otherModeSource.invalidate() }
        let done = Signal()
        let release = holdLoop(thread)
        loop.perform {
            #expect(port.send(before: .distantFuture))
            // Polling runs of a mode the port is not in: the first learns the port has a message,
            // the second takes in the block queued after the send, which waits for the mode.
            _ = loop.run(mode: Self.other, before: Date())
            loop.perform {
                order.append("block")
                done.fire()
            }
            _ = loop.run(mode: Self.other, before: Date())
        }
        // Queued with the block above, for a mode never run: the turn that runs the block above
        // has room for one more block, and the later block is the one it finds.
        loop.perform(inModes: [RunLoop.Mode("MessageBeforeBlockOrderTests.never")]) {}
        release.fire()
        #expect(done.wait())
        #expect(order.values == ["message", "block"])
    }

    @Test func aBatchContinuedByANestedRunGoesBeforeBlocksQueuedAfterItsMessages() throws {
        let thread = try RunLoopThread(name: "p3-nested")
        defer { thread.stop() }
        let loop = thread.loop
        let order = Recorder<String>()
        let port = MessagePort(queueLimit: 8)
        let done = Signal()
        port.setHandler { message in
            order.append("message \(message.msgid)")
            guard message.msgid == 0 else { return }
            // Messages 1 and 2 were sent before this block was queued: the nested run handles
            // them first (R8 continues the batch), then the block.
            loop.perform {
                order.append("block")
                done.fire()
            }
            _ = loop.run(mode: .default, before: Date())
        }
        loop.add(port, forMode: .default)
        defer { port.invalidate() }
        let release = holdLoop(thread)
        for id in 0..<3 { #expect(port.send(before: .distantFuture, msgid: UInt32(id))) }
        release.fire()
        #expect(done.wait())
        try loop.performAndWait {}
        #expect(order.values == ["message 0", "message 1", "message 2", "block"])
    }
}
