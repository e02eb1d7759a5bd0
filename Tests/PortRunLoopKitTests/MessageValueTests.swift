import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// MessagePort.Message is a value: a handler that keeps messages keeps each one as it was, although
/// the loop delivers a batch through one reused value (pure signals and messages with components
/// and reply ports mixed in one batch).
@Suite(.timeLimit(.minutes(1))) struct MessageValueTests {
    @Test func keptMessagesKeepTheirOwnFieldsAcrossAMixedBatch() throws {
        let reply = MessagePort()
        let (port, messages) = try Self.keptMessagesOfOneBatch { port in
            for i in 0..<12 {
                if i % 3 == 0 {
                    #expect(port.send(before: .distantFuture, msgid: UInt32(i), components: [Data([UInt8(i)])], from: reply))
                } else {
                    #expect(port.send(before: .distantFuture, msgid: UInt32(i)))
                }
            }
        }
        #expect(messages.map(\.msgid) == (0..<12).map(UInt32.init))
        for message in messages {
            let i = Int(message.msgid)
            #expect(message.receivePort === port)
            if i % 3 == 0 {
                #expect(message.components == [Data([UInt8(i)])])
                #expect(message.replyPort === reply)
            } else {
                #expect(message.components.isEmpty, "a pure signal after a message with components has none")
                #expect(message.replyPort == nil)
            }
        }
    }

    /// A message keeps only what its own sender attached: components without a reply port after a
    /// message that had one, descriptors on the one message that carried them.
    @Test func keptMessagesKeepTheirOwnReplyPortAndDescriptorsAcrossAMixedBatch() throws {
        let reply = MessagePort()
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let (_, messages) = try Self.keptMessagesOfOneBatch { port in
            #expect(port.send(before: .distantFuture, msgid: 0, components: [Data([0])], from: reply))
            #expect(port.send(before: .distantFuture, msgid: 1, components: [Data([1])]))
            #expect(port.send(before: .distantFuture, msgid: 2, components: [], fileDescriptors: [ends[0]]))
            #expect(port.send(before: .distantFuture, msgid: 3, components: [Data([3])]))
            #expect(port.send(before: .distantFuture, msgid: 4))
        }
        #expect(messages.map(\.msgid) == [0, 1, 2, 3, 4])
        guard messages.count == 5 else { return }
        #expect(messages[0].replyPort === reply && messages[0].components == [Data([0])])
        #expect(messages[1].replyPort == nil && messages[1].components == [Data([1])])
        #expect(messages[2].fileDescriptors.count == 1 && messages[2].components.isEmpty && messages[2].replyPort == nil)
        for i in [0, 1, 3, 4] { #expect(messages[i].fileDescriptors.isEmpty) }
        #expect(messages[3].replyPort == nil && messages[3].components == [Data([3])])
        #expect(messages[4].components.isEmpty && messages[4].replyPort == nil)
        // The descriptor is a working duplicate of the pipe's read end, owned by the message.
        guard let fd = messages[2].fileDescriptors.first?.take() else { return }
        defer { close(fd) }
        #expect(write(ends[1], "x", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(fd, &byte, 1) == 1 && byte == UInt8(ascii: "x"))
    }

    /// Makes a port on a new loop thread whose handler keeps every message, calls `send` with it
    /// while the loop is held (so the sends form one batch), lets the loop deliver, and returns the
    /// port and the messages kept, in order.
    static func keptMessagesOfOneBatch(_ send: (MessagePort) -> Void) throws -> (MessagePort, [MessagePort.Message]) {
        let thread = try RunLoopThread(name: "message-values")
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 100)
        let kept = Locked<[MessagePort.Message]>([])
        port.setHandler { message in kept.withLock { $0.append(message) } }
        let release = holdLoop(thread)
        thread.loop.add(port, forMode: .common)
        send(port)
        release.fire()
        try thread.loop.performAndWait {}
        return (port, kept.withLock { $0 })
    }
}
