#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A connection that fails on the publisher's side (a system call on its socket fails there, made
/// to by a seccomp filter on the publisher's loop thread) is closed, counted as failed (not as a
/// rejected frame) and reported with its reason; its peer sees the end instead of waiting. A send
/// that fails on a client's thread fails that send only.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessConnectionFailureTests {
    /// A published port on a loop thread started under `refusal` (nil: none).
    final class Publisher: @unchecked Sendable {
        let thread: RunLoopThread
        let port: MessagePort
        let published: PublishedMessagePort
        let received = Collector<UInt32>()
        let disconnects = Collector<CrossProcessPeer.DisconnectReason>()

        init(_ directory: NameDirectory, name: String, queueLimit: Int, refusal: SyscallRefusal?) throws {
            thread = try refusal.map { try onRefusingThread($0) { try RunLoopThread(name: "xproc-failing-owner") } }
                ?? RunLoopThread(name: "xproc-owner")
            port = MessagePort(queueLimit: queueLimit)
            port.setHandler { [received] in received.append($0.msgid) }
            thread.loop.add(port, forMode: .default)
            published = try directory.registry.publish(port, as: name, on: thread.loop)
            published.setPeerDisconnectHandler { [disconnects] _, reason in disconnects.append(reason) }
        }

        /// Waits (bounded) for the first peer to disconnect; the reason's text when it is a
        /// failed connection, else nil (recorded as an issue).
        func failedConnectionReason() -> String? {
            guard disconnects.wait(for: 1, seconds: 10) else {
                Issue.record("no peer disconnected")
                return nil
            }
            guard case .connectionFailed(let why) = disconnects.values.first else {
                Issue.record("expected a failed connection, got \(disconnects.values)")
                return nil
            }
            return why
        }

        /// Checks the counts of one connection that failed: not a rejected frame.
        func expectOneFailedConnection() {
            let statistics = published.statistics
            #expect(statistics.connectionsFailed == 1)
            #expect(statistics.framesRejected == 0)
        }

        func stop() {
            published.unpublish()
            thread.stop()
        }
    }

    @Test func creditsThatCannotBeSentBackCloseTheConnection() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // A credit frame is a bare header: the owner's thread cannot send one (ENOBUFS).
        let publisher = try Publisher(directory, name: "stingy", queueLimit: 2,
                                      refusal: .send(length: UInt32(CrossProcessFrame.headerSize), errno: ENOBUFS))
        defer { publisher.stop() }
        let remote = try directory.registry.remotePort(named: "stingy")
        // A loop that reads the client's end of the connection, to see the publisher close it.
        let client = try RunLoopThread(name: "xproc-client")
        defer { client.stop() }
        let ends = Collector<MessagePort.InvalidationReason>()
        remote.setInvalidationHandler(on: client.loop) { ends.append($0) }
        // Queue limit 2: the credit of the first message taken goes back at once, and fails.
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 1))
        #expect(publisher.received.wait(for: 1, seconds: 10))
        #expect(publisher.failedConnectionReason()?.contains("credits") == true)
        publisher.expectOneFailedConnection()
        // The client sees the end, rather than waiting for credits.
        #expect(ends.wait(for: 1, seconds: 10))
        #expect(ends.values == [.peerDied])
        #expect(!remote.isValid)
        #expect(!remote.send(before: Date(timeIntervalSinceNow: 1), msgid: 2))
    }

    @Test func aConnectionTheLoopCannotWatchIsClosedAndCountedAsFailed() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // `watch` asks this epoll instance whether epoll takes an fd; on the owner's thread, where
        // accepted connections are watched, the answer is no (the listener was checked by the
        // thread that published).
        let probe = try #require(System.probeEpoll())
        let publisher = try Publisher(directory, name: "blind", queueLimit: 4, refusal: .epollAdd(epoll: probe, errno: EPERM))
        defer { publisher.stop() }
        let fd = rawConnection(to: directory, name: "blind")
        defer { close(fd) }
        var patience = timeval(tv_sec: 10, tv_usec: 0)
        #expect(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size)) == 0)
        var byte: UInt8 = 0
        #expect(recv(fd, &byte, 1, 0) == 0) // closed by the publisher: end of file, not the timeout
        #expect(publisher.failedConnectionReason()?.contains("could not watch its socket") == true)
        #expect(publisher.published.statistics.connectionsAccepted == 1)
        publisher.expectOneFailedConnection()
    }

    @Test func aSendTheKernelRefusesFailsThatSendOnly() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Publisher(directory, name: "picky", queueLimit: 4, refusal: nil)
        defer { publisher.stop() }
        let remote = try directory.registry.remotePort(named: "picky")
        // A message without components is a bare header: this thread cannot send one (ENOBUFS).
        let (sent, failure) = try onRefusingThread(.send(length: UInt32(CrossProcessFrame.headerSize), errno: ENOBUFS)) {
            (remote.send(before: Date(timeIntervalSinceNow: 1), msgid: 1),
             thrownError { () throws(CrossProcessPortError) in
                 _ = try remote.sendRequest(msgid: 2, sendTimeout: .seconds(1), receiveTimeout: .seconds(1))
             })
        }
        #expect(!sent)
        #expect(failure == .systemCallFailed("send", errno: ENOBUFS))
        // The connection is intact and spent no credit: four messages still go through.
        #expect(remote.isValid)
        for msgid in UInt32(10)..<14 { #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: msgid)) }
        #expect(publisher.received.wait(for: 4, seconds: 10))
        #expect(publisher.received.values == [10, 11, 12, 13])
    }
}
