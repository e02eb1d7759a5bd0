import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// MessagePort.Message is a value: a handler that keeps messages keeps each one as it was, although
/// the loop delivers a batch through one reused value (pure signals and messages with components
/// and reply ports mixed in one batch).
@Suite(.timeLimit(.minutes(1))) struct MessageValueTests {
    @Test func keptMessagesKeepTheirOwnFieldsAcrossAMixedBatch() throws {
        let thread = try RunLoopThread(name: "message-values")
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 100)
        let reply = MessagePort()
        let kept = Locked<[MessagePort.Message]>([])
        port.setHandler { message in kept.withLock { $0.append(message) } }
        let release = holdLoop(thread)                // the sends below form one batch
        thread.loop.add(port, forMode: .common)
        for i in 0..<12 {
            if i % 3 == 0 {
                #expect(port.send(before: .distantFuture, msgid: UInt32(i), components: [Data([UInt8(i)])], from: reply))
            } else {
                #expect(port.send(before: .distantFuture, msgid: UInt32(i)))
            }
        }
        release.fire()
        try thread.loop.performAndWait {}
        let messages = kept.withLock { $0 }
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
}
