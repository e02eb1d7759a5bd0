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
    @Test func creditsThatCannotBeSentBackCloseTheConnection() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // A credit frame is a bare header: the owner's thread cannot send one (ENOBUFS).
        let publisher = try TestPublisher(directory, name: "stingy", queueLimit: 2,
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
        #expect(publisher.waitForMessages(1))
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
        let publisher = try TestPublisher(directory, name: "blind", queueLimit: 4, refusal: .epollAdd(epoll: probe, errno: EPERM))
        defer { publisher.stop() }
        let fd = rawConnection(to: directory, name: "blind")
        defer { close(fd) }
        #expect(readsEndOfFile(fd)) // closed by the publisher: end of file, not the timeout
        #expect(publisher.failedConnectionReason()?.contains("could not watch its socket") == true)
        #expect(publisher.published.statistics.connectionsAccepted == 1)
        publisher.expectOneFailedConnection()
    }

    @Test func aSendTheKernelRefusesFailsThatSendOnly() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try TestPublisher(directory, name: "picky", queueLimit: 4)
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
        #expect(publisher.waitForMessages(4))
        #expect(publisher.received.values == [10, 11, 12, 13])
    }
}

extension TestPublisher {
    /// Waits (bounded) for the first peer to disconnect; the reason's text when it is a
    /// failed connection, else nil (recorded as an issue).
    func failedConnectionReason() -> String? {
        guard waitForDisconnect() else {
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
}
