#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A request's read ends at its reply: frames the publisher wrote right after it (a credit frame,
/// a message to a reply port) stay in the socket for the next look, and each of them is still
/// taken by whoever needs it: a send without a credit, a later request, a `readingOn:` loop.
///
/// The publisher here is a hand-made peer on the other end of a socket pair, so the frames that
/// follow a reply are in the socket before the request is even sent (request ids start at 1, route
/// ids at 1): what each read finds does not depend on timing.
@Suite(.serialized) struct CrossProcessReplyReadTests {
    private func write(_ frame: CrossProcessFrame, to fd: Int32) {
        let bytes = frame.encoded()
        #expect(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
    }

    /// A local reply port on its own loop thread, recording what it is sent.
    private func makeReplyPort(_ thread: RunLoopThread, received: Recorder<UInt32>, signal: Signal) -> MessagePort {
        let port = MessagePort(queueLimit: 8)
        port.setHandler { message in
            received.append(message.msgid)
            signal.fire()
        }
        thread.loop.add(port, forMode: .default)
        return port
    }

    /// The reply, then a credit frame and a message to the reply port, all in the socket at once:
    /// the request returns its reply, a send with no credit left (and no time to wait) finds the
    /// credit, and the routed message is delivered. `onLoop`: the request waits on a loop (its
    /// temporary read source) instead of polling from a thread without one.
    @Test(arguments: [false, true])
    func framesAfterAReplyAreAllTaken(onLoop: Bool) throws {
        let replyThread = try RunLoopThread(name: "xproc-reply-port")
        defer { replyThread.stop() }
        let routed = Recorder<UInt32>()
        let delivered = Signal()
        let replyPort = makeReplyPort(replyThread, received: routed, signal: delivered)
        let (remote, peer) = try makePairedRemotePort(credits: 2)
        defer { remote.invalidate(); close(peer) }

        // The first credit: a message naming the reply port (route 1).
        #expect(remote.send(before: .distantFuture, msgid: 1, components: [], from: replyPort))
        // What the publisher will have written by the time the request (id 1) reads: its reply,
        // both credits back, and a message to route 1.
        write(CrossProcessFrame(kind: .reply, msgid: 1005, firstID: 1, components: [Data("pong".utf8)]), to: peer)
        write(CrossProcessFrame(kind: .credit, firstID: 2), to: peer)
        write(CrossProcessFrame(kind: .routed, msgid: 77, firstID: 1), to: peer)

        // The second credit: the request.
        let reply: Result<(UInt32, [Data]), CrossProcessPortError>
        if onLoop {
            let requester = try RunLoopThread(name: "xproc-requester")
            defer { requester.stop() }
            let answer = Locked<Result<(UInt32, [Data]), CrossProcessPortError>?>(nil)
            try requester.loop.performAndWait(timeout: .seconds(30)) {
                do throws(CrossProcessPortError) {
                    let message = try remote.sendRequest(msgid: 5, sendTimeout: .seconds(5), receiveTimeout: .seconds(10))
                    answer.withLock { $0 = .success((message.msgid, message.components)) }
                } catch {
                    answer.withLock { $0 = .failure(error) }
                }
            }
            reply = try #require(answer.withLock { $0 })
        } else {
            reply = Result { () throws(CrossProcessPortError) in
                let message = try remote.sendRequest(msgid: 5, sendTimeout: .seconds(5), receiveTimeout: .seconds(10))
                return (message.msgid, message.components)
            }
        }
        let (msgid, components) = try reply.get()
        #expect(msgid == 1005)
        #expect(components == [Data("pong".utf8)])

        // No credit was spent yet after the request: a send that may not wait at all must find
        // the credit frame the request left in the socket.
        #expect(remote.send(before: .distantPast, msgid: 9))
        #expect(delivered.wait(seconds: 10))
        #expect(routed.values == [77])
        // FIFO on the wire: the message, the request, the send.
        let kinds = (0..<3).compactMap { _ in readRawFrame(peer) }.map { ($0.msgid, $0.flags.contains(.request)) }
        #expect(kinds.map(\.0) == [1, 5, 9])
        #expect(kinds.map(\.1) == [false, true, false])
        #expect(remote.isValid)
    }

    /// With a `readingOn:` loop, a routed message the request left behind reaches its port
    /// without any later send or request: the loop's read source sees it.
    @Test func aReadingLoopTakesWhatARequestLeft() throws {
        let replyThread = try RunLoopThread(name: "xproc-reply-port")
        defer { replyThread.stop() }
        let routed = Recorder<UInt32>()
        let delivered = Signal()
        let replyPort = makeReplyPort(replyThread, received: routed, signal: delivered)
        let readingThread = try RunLoopThread(name: "xproc-reading")
        defer { readingThread.stop() }
        let (remote, peer) = try makePairedRemotePort(credits: 4, readingOn: readingThread.loop)
        defer { remote.invalidate(); close(peer) }

        #expect(remote.send(before: .distantFuture, msgid: 1, components: [], from: replyPort))
        #expect(readRawFrame(peer)?.msgid == 1)
        // The publisher answers the request (id 1) once it has it (the loop would drop a reply
        // to a request not yet made), with a routed message right behind the reply; whoever reads
        // first (the request or the loop), the routed message must arrive.
        let answered = Signal()
        Thread.detachNewThread { [self] in
            if let request = readRawFrame(peer), request.flags.contains(.request) {
                write(CrossProcessFrame(kind: .reply, msgid: 1005, firstID: request.firstID), to: peer)
                write(CrossProcessFrame(kind: .routed, msgid: 78, firstID: 1), to: peer)
            }
            answered.fire()
        }
        let reply = try remote.sendRequest(msgid: 5, sendTimeout: .seconds(5), receiveTimeout: .seconds(10))
        #expect(answered.wait(seconds: 10))
        #expect(reply.msgid == 1005)
        #expect(delivered.wait(seconds: 10))
        #expect(routed.values == [78])
    }

    /// Two replies in the socket: the first request reads only its own, the second finds its reply
    /// still there (the first read ended early, not lost it).
    @Test func aLaterRequestFindsItsReplyLeftInTheSocket() throws {
        let (remote, peer) = try makePairedRemotePort(credits: 4)
        defer { remote.invalidate(); close(peer) }
        write(CrossProcessFrame(kind: .reply, msgid: 1001, firstID: 1), to: peer)
        write(CrossProcessFrame(kind: .reply, msgid: 1002, firstID: 2), to: peer)
        let first = try remote.sendRequest(msgid: 1, sendTimeout: .seconds(5), receiveTimeout: .seconds(10))
        let second = try remote.sendRequest(msgid: 2, sendTimeout: .seconds(5), receiveTimeout: .seconds(10))
        #expect(first.msgid == 1001)
        #expect(second.msgid == 1002)
    }

    /// Answers every request read from `peer` (msgid + 1000) until `count` were answered; fires
    /// `done` then.
    private func answerRequests(_ count: Int, on peer: Int32, done: Signal) {
        Thread.detachNewThread { [self] in
            var answered = 0
            while answered < count, let frame = readRawFrame(peer) {
                guard frame.flags.contains(.request) else { continue }
                write(CrossProcessFrame(kind: .reply, msgid: frame.msgid + 1000, firstID: frame.firstID), to: peer)
                answered += 1
            }
            done.fire()
        }
    }

    /// Requests from a loop's thread read their replies through a reader the connection keeps for
    /// that loop; requests from another loop's thread meanwhile use one of their own; and when the
    /// publisher goes away, a request on the first loop fails with the end (the kept reader does
    /// not keep the connection open).
    @Test func requestsFromLoopThreadsAcrossTheKeptReader() throws {
        let first = try RunLoopThread(name: "xproc-requester-1")
        defer { first.stop() }
        let second = try RunLoopThread(name: "xproc-requester-2")
        defer { second.stop() }
        let (remote, peer) = try makePairedRemotePort(credits: 64)
        defer { remote.invalidate() }
        let answered = Signal()
        answerRequests(30, on: peer, done: answered)
        let replies = Recorder<UInt32>()
        for thread in [first, second, first] {
            try thread.loop.performAndWait(timeout: .seconds(30)) {
                for msgid in UInt32(1)...10 {
                    if let reply = try? remote.sendRequest(msgid: msgid, sendTimeout: .seconds(5), receiveTimeout: .seconds(10)) {
                        replies.append(reply.msgid)
                    }
                }
            }
        }
        #expect(answered.wait(seconds: 10))
        #expect(replies.values == Array(repeating: Array(UInt32(1001)...1010), count: 3).flatMap { $0 })

        close(peer) // the publisher goes away
        let failure = Locked<CrossProcessPortError?>(nil)
        try first.loop.performAndWait(timeout: .seconds(30)) {
            do throws(CrossProcessPortError) {
                _ = try remote.sendRequest(msgid: 99, sendTimeout: .seconds(5), receiveTimeout: .seconds(10))
            } catch {
                failure.withLock { $0 = error }
            }
        }
        let error = failure.withLock { $0 }
        #expect(error == .peerDied)
        #expect(!remote.isValid)
    }
}
