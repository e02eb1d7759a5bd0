#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `sendRequest` to a port of another process, and replies from a handler (X8).
@Suite(.serialized) struct CrossProcessRequestTests {
    @Test func aRequestGetsTheHandlersReply() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "echo", "5", "reply"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "echo")
        for round in 0..<20 {
            let reply = try remote.sendRequest(msgid: UInt32(round), components: [Data("r\(round)".utf8)],
                                               sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
            #expect(reply.msgid == UInt32(round) + 1000)
            #expect(reply.components == [Data("r\(round)".utf8)])
            #expect(reply.receivePort === remote)
        }
        remote.invalidate()
        #expect(throws: CrossProcessPortError.invalidPort) {
            _ = try remote.sendRequest(sendTimeout: .seconds(1), receiveTimeout: .seconds(1))
        }
    }

    @Test func theAsyncFormGetsTheReplyToo() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "async-echo", "5", "reply"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "async-echo")
        let reply = try await remote.sendRequest(msgid: 3, components: [Data("x".utf8)],
                                                 sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
        #expect(reply.msgid == 1003)
        #expect(reply.components == [Data("x".utf8)])
    }

    @Test func aHandlerHereAnswersARequestFromAnotherProcess() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-replier")
        defer { thread.stop() }
        let port = MessagePort()
        let answered = Recorder<Bool>()
        port.setHandler { message in
            answered.append(message.reply(msgid: message.msgid + 1000, components: message.components, before: Date(timeIntervalSinceNow: 5)))
            // One reply per request: a second one is refused.
            answered.append(message.reply(msgid: 0, before: Date(timeIntervalSinceNow: 5)))
        }
        thread.loop.add(port, forMode: .default)
        let published = try directory.registry.publish(port, as: "replier", on: thread.loop)
        defer { published.unpublish() }
        let requester = try CrossProcessProbeProcess(["request", directory.path, "replier", "5000", "5000"])
        #expect(requester.waitForLine(startingWith: "REPLY") == "REPLY 1007 ping")
        #expect(requester.waitForExit() == 0)
        #expect(port.waitForRunningHandlers(timeout: .seconds(10))) // the handler sent the reply before it recorded it
        #expect(answered.values == [true, false])
    }

    @Test func aReplyThatWasNotSentMayBeSentAgain() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // The publisher's loop thread cannot send a frame of the first reply's length: the socket
        // seems full (EAGAIN), and that reply's date has passed.
        let refusedReply = [Data(count: 777)], reply = [Data(count: 778)]
        let refusal = SyscallRefusal.send(length: UInt32(CrossProcessFrame.encodedSize(of: refusedReply)), errno: EAGAIN)
        let answered = Recorder<Bool>()
        let publisher = try TestPublisher(directory, name: "retried", refusal: refusal) { message in
            answered.append(message.reply(msgid: 1, components: refusedReply, before: Date()))
            answered.append(message.reply(msgid: 2, components: reply, before: Date(timeIntervalSinceNow: 5)))
            answered.append(message.reply(msgid: 3, before: Date(timeIntervalSinceNow: 5)))
        }
        defer { publisher.stop() }
        let remote = try directory.registry.remotePort(named: "retried")
        let received = try remote.sendRequest(msgid: 9, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
        #expect(received.msgid == 2)
        #expect(received.components == reply)
        #expect(publisher.port.waitForRunningHandlers(timeout: .seconds(10))) // it records after replying
        #expect(answered.values == [false, true, false])
    }

    @Test func noReplyEndsWithAReceiveTimeout() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "silent", "5"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "silent")
        let start = Date()
        #expect(throws: CrossProcessPortError.receiveTimedOut) {
            _ = try remote.sendRequest(msgid: 1, sendTimeout: .seconds(5), receiveTimeout: .milliseconds(200))
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 0.19 && elapsed < 10)
        #expect(publisher.waitForLine(startingWith: "MSG 1 1") != nil) // it was delivered, just not answered
    }

    @Test func aFullReceiverEndsWithASendTimeout() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // Queue limit 1 and the owner loop held: the first send spends the only credit.
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "full", "1", "hold", "reply"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "full")
        #expect(remote.send(before: Date(), msgid: 1))
        #expect(throws: CrossProcessPortError.sendTimedOut) {
            _ = try remote.sendRequest(msgid: 2, sendTimeout: .milliseconds(200), receiveTimeout: .seconds(5))
        }
        // Released, the loop takes the held message and the credit comes back.
        publisher.tell("go")
        let reply = try remote.sendRequest(msgid: 3, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
        #expect(reply.msgid == 1003)
    }

    @Test func aLocalPortIsNotARemotePort() {
        #expect(throws: CrossProcessPortError.notARemotePort) {
            _ = try MessagePort().sendRequest(sendTimeout: .seconds(1), receiveTimeout: .seconds(1))
        }
    }
}
