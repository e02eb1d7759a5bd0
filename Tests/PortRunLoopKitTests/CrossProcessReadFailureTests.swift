#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A read of a cross-process connection that the kernel fails (made to by a seccomp filter for
/// that connection's fd, on the thread that reads it) ends the connection as failed, with the
/// read's errno, on either side: the publisher counts it as a failed connection (not a rejected
/// frame) and its client sees the end; a client's waiting request throws the failure and its
/// remote port is invalidated as failed, not as if the publisher had died.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessReadFailureTests {
    @Test func aPublisherWhoseReadFailsEndsThatConnectionAsFailed() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try TestPublisher(directory, name: "unreadable", queueLimit: 4)
        defer { publisher.stop() }
        let client = try RunLoopThread(name: "xproc-client")
        defer { client.stop() }
        let remote = try directory.registry.remotePort(named: "unreadable")
        let ends = Collector<MessagePort.InvalidationReason>()
        remote.setInvalidationHandler(on: client.loop) { ends.append($0) }
        // The first message is read: the connection is accepted and works.
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 1))
        #expect(publisher.waitForMessages(1))
        let accepted = try #require(socketDescriptors(at: publisher.published.socketPath, .accepted).first)
        try publisher.thread.loop.performAndWait(timeout: .seconds(10)) {
            try SyscallRefusal.receive(fileDescriptor: accepted, errno: EIO).installOnCurrentThread()
        }

        // The next one cannot be read. (A loop that has just answered may look at the socket
        // without waiting for it to be readable, a spin read: that read fails the same way, and
        // may do so before this send, which then finds the connection ended.)
        _ = remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 2)
        let why = publisher.failedConnectionReason()
        #expect(why?.hasPrefix("recv: ") == true)
        #expect(why?.contains("(errno \(EIO))") == true)
        publisher.expectOneFailedConnection()
        #expect(publisher.published.statistics.peersDisconnected == 1)
        #expect(publisher.received.values == [1])
        #expect(publisher.published.isPublished) // one connection failed, not the publication
        // The client sees the end.
        #expect(ends.wait(for: 1, seconds: 10))
        #expect(ends.values == [.peerDied])
        #expect(!remote.isValid)
    }

    @Test func aClientWhoseReadFailsFailsItsWaitingRequestAndBecomesInvalid() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // The reply makes the client's socket readable, so the client reads it at once.
        let publisher = try TestPublisher(directory, name: "deafclient") { message in
            _ = message.reply(msgid: message.msgid + 1000, components: [], before: Date(timeIntervalSinceNow: 5))
        }
        defer { publisher.stop() }
        let remote = try directory.registry.remotePort(named: "deafclient")
        // Without a loop: the handler runs on the thread that finds the end.
        let reasons = Collector<MessagePort.InvalidationReason>()
        remote.setInvalidationHandler { reasons.append($0) }
        let fd = try #require(socketDescriptors(at: publisher.published.socketPath, .client).first)
        // The request goes out and is answered; the thread's read of the reply fails.
        let failure = try onRefusingThread(.receive(fileDescriptor: fd, errno: EIO)) {
            thrownError { () throws(CrossProcessPortError) in
                _ = try remote.sendRequest(msgid: 1, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
            }
        }
        #expect(failure == .systemCallFailed("recv", errno: EIO))
        Self.expectInvalidatedByAFailedRead(remote, reasons)
        #expect(publisher.waitForMessages(1)) // the request did go out
        // The client closed its end: the publisher sees it closed, not failed.
        #expect(publisher.waitForDisconnect())
        #expect(publisher.disconnects.values == [.closed])
    }

    @Test func aClientWhoseReadingLoopCannotReadBecomesInvalid() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // Queue limit 2: the credit of the first message taken comes back at once.
        let publisher = try TestPublisher(directory, name: "deafloop", queueLimit: 2)
        defer { publisher.stop() }
        let reader = try RunLoopThread(name: "xproc-reader")
        defer { reader.stop() }
        let remote = try directory.registry.remotePort(named: "deafloop", readingOn: reader.loop)
        let fd = try #require(socketDescriptors(at: publisher.published.socketPath, .client).first)
        try reader.loop.performAndWait(timeout: .seconds(10)) {
            try SyscallRefusal.receive(fileDescriptor: fd, errno: EIO).installOnCurrentThread()
        }
        let reasons = Collector<MessagePort.InvalidationReason>()
        remote.setInvalidationHandler(on: reader.loop) { reasons.append($0) }
        // The publisher sends the message's credit back; the reading loop cannot read it. (With a
        // credit left, this thread's send reads nothing. A loop that has just answered may look
        // at the socket without waiting for it to be readable, a spin read: that read fails the
        // same way, and may do so before this send, which then finds the connection ended.)
        _ = remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 1)
        Self.expectInvalidatedByAFailedRead(remote, reasons)
        #expect(throws: CrossProcessPortError.systemCallFailed("recv", errno: EIO)) {
            _ = try remote.sendRequest(msgid: 2, sendTimeout: .seconds(1), receiveTimeout: .seconds(1))
        }
    }

    /// `remote` was invalidated because a read of its connection failed with EIO (waited for,
    /// bounded).
    private static func expectInvalidatedByAFailedRead(_ remote: MessagePort, _ reasons: Collector<MessagePort.InvalidationReason>) {
        #expect(reasons.wait(for: 1, seconds: 10))
        guard case .connectionFailed(let why) = reasons.values.first else {
            Issue.record("expected a failed connection, got \(reasons.values)")
            return
        }
        #expect(why.hasPrefix("recv: "))
        #expect(why.contains("(errno \(EIO))"))
        #expect(reasons.values.count == 1)
        #expect(!remote.isValid)
    }
}
