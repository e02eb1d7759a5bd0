import Foundation
import PortRunLoopKit
import Synchronization
import Testing

/// The reply address of a message from another process: `reply` answers over the connection with
/// no port made, `replyPort` makes one on first use (the same one while a handler keeps it), and
/// invalidating that port ends the replies (X8). Publisher and client share the process here; the
/// connection between them is a real socket.
@Suite(.timeLimit(.minutes(1))) struct CrossProcessReplyAddressTests {
    /// What a handler saw, handed to the test thread.
    final class Seen: Sendable {
        let values = Mutex<[String: Bool]>([:])
        func record(_ key: String, _ value: Bool) { values.withLock { $0[key] = value } }
        subscript(key: String) -> Bool? { values.withLock { $0[key] } }
    }

    /// A port published on a thread of its own with `handler`, and a remote port for it (read by
    /// `readingOn`, if given).
    struct Exchange {
        let directory = NameDirectory()
        let answerer: RunLoopThread
        let published: PublishedMessagePort
        let remote: MessagePort

        init(_ name: String, queueLimit: Int = 4, readingOn loop: PortRunLoop? = nil,
             handler: @escaping @Sendable (MessagePort.Message) -> Void) throws {
            answerer = try RunLoopThread(name: "answerer")
            let port = MessagePort(queueLimit: queueLimit)
            port.setHandler(handler)
            answerer.loop.add(port, forMode: .common)
            published = try directory.registry.publish(port, as: name, on: answerer.loop)
            remote = try directory.registry.remotePort(named: name, readingOn: loop)
        }

        /// Waits until the handler that ran last has returned (its records were all made).
        func handlerReturned() throws { try answerer.loop.performAndWait {} }

        func end() {
            remote.invalidate()
            published.unpublish()
            answerer.stop()
            directory.remove()
        }
    }

    @Test func replyPortIsMadeOnceAndAnswersTheRequest() throws {
        let seen = Seen()
        let exchange = try Exchange("made-once") { message in
            guard let first = message.replyPort else { return seen.record("has port", false) }
            seen.record("has port", true)
            seen.record("same port", message.replyPort === first)
            seen.record("valid before", first.isValid)
            let sent = first.send(before: Date(timeIntervalSinceNow: 5), msgid: message.msgid + 1, components: message.components)
            seen.record("sent", sent)
            seen.record("counted", first.statistics.sent == 1)
            // A request has one answer: the route is spent, through the port or directly.
            seen.record("second reply refused", !message.reply(msgid: 0, before: Date(timeIntervalSinceNow: 5)))
            seen.record("valid after", first.isValid)
        }
        defer { exchange.end() }

        let reply = try exchange.remote.sendRequest(msgid: 41, components: [Data("ask".utf8)], sendTimeout: .seconds(5),
                                                    receiveTimeout: .seconds(20))
        #expect(reply.msgid == 42)
        #expect(reply.components == [Data("ask".utf8)])
        try exchange.handlerReturned()
        #expect(seen["has port"] == true)
        #expect(seen["same port"] == true)
        #expect(seen["valid before"] == true)
        #expect(seen["sent"] == true)
        #expect(seen["counted"] == true)
        #expect(seen["second reply refused"] == true)
        #expect(seen["valid after"] == false)
    }

    /// Whether the handler lets go of the invalidated port (the reply then goes over the route) or
    /// keeps it (the reply then goes through the port): either way nothing is sent.
    @Test(arguments: [false, true]) func invalidatingTheReplyPortEndsTheReplies(keepingThePort: Bool) throws {
        let seen = Seen()
        let exchange = try Exchange("invalidated-reply") { message in
            let kept = keepingThePort ? message.replyPort : nil
            if let kept { kept.invalidate() } else { message.replyPort?.invalidate() }
            seen.record("replied", message.reply(msgid: 1, before: Date(timeIntervalSinceNow: 5)))
            seen.record("sent on the port", kept?.send(before: Date(timeIntervalSinceNow: 5), msgid: 2) ?? false)
            seen.record("valid", message.replyPort?.isValid ?? true)
            withExtendedLifetime(kept) {}
        }
        defer { exchange.end() }

        #expect(throws: CrossProcessPortError.receiveTimedOut) {
            _ = try exchange.remote.sendRequest(msgid: 1, sendTimeout: .seconds(5), receiveTimeout: .milliseconds(300))
        }
        try exchange.handlerReturned()
        #expect(seen["replied"] == false)
        #expect(seen["sent on the port"] == false)
        #expect(seen["valid"] == false)
    }

    @Test func replyWithoutAPortAnswersEveryMessageOnItsRoute() throws {
        let client = try RunLoopThread(name: "client")
        defer { client.stop() }
        let answers = Mutex<[UInt32]>([])
        let done = DispatchSemaphore(value: 0)
        let replyPort = MessagePort(queueLimit: 64)
        replyPort.setHandler { message in
            let count = answers.withLock { $0.append(message.msgid); return $0.count }
            if count == 6 { done.signal() }
        }
        client.loop.add(replyPort, forMode: .default)
        // A reply port named with `from:` takes any number of messages: two answers per message.
        let exchange = try Exchange("routed", queueLimit: 64, readingOn: client.loop) { message in
            message.reply(msgid: message.msgid * 10, before: Date(timeIntervalSinceNow: 5))
            message.reply(msgid: message.msgid * 10 + 1, before: Date(timeIntervalSinceNow: 5))
        }
        defer { exchange.end() }

        for msgid in UInt32(1)...3 {
            #expect(exchange.remote.send(before: Date(timeIntervalSinceNow: 10), msgid: msgid, from: replyPort))
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(answers.withLock { $0 } == [10, 11, 20, 21, 30, 31])
    }
}
