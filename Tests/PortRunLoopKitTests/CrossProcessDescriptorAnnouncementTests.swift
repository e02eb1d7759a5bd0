#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A connection's frames are read with a plain `recv` until the other side announces descriptors
/// (a ``CrossProcessFrame/Kind/descriptors`` frame, sent once, just before its first frame with
/// some); from then on with a control buffer. Each side announces before its first descriptors,
/// never again; a frame that carries descriptors unannounced is a protocol violation, and the
/// descriptors are closed, whichever read took it.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessDescriptorAnnouncementTests {
    typealias Pipes = CrossProcessFileDescriptorTests
    typealias Publisher = TestPublisher

    @Test func theAnnouncementIsAFrameWithoutFields() {
        let bytes = CrossProcessFrame.descriptorsFrame
        #expect(bytes.count == CrossProcessFrame.headerSize)
        func parse(_ bytes: [UInt8]) -> Result<CrossProcessFrame, FrameError> {
            bytes.withUnsafeBytes { bytes in
                do throws(FrameError) { return .success(try CrossProcessFrame.parse(bytes)) } catch { return .failure(error) }
            }
        }
        #expect(parse(bytes) == .success(CrossProcessFrame(kind: .descriptors)))
        var withMsgid = bytes
        withMsgid[8] = 1
        #expect(parse(withMsgid) == .failure(.unexpectedField))
        var withCount = bytes
        withCount[7] = 1
        #expect(parse(withCount) == .failure(.unexpectedDescriptors(1)))
    }

    // MARK: The publisher's side

    /// A publisher whose handler records what each message carried and answers every request
    /// with a pipe's read end (a plain message has nowhere to reply to: its reply is false).
    private func makeReplyingPublisher(_ directory: NameDirectory, name: String, carried: Collector<Int>) throws -> Publisher {
        try Publisher(directory, name: name, queueLimit: 8) { message in
            carried.append(message.fileDescriptors.count)
            let readEnd = Pipes.pipeHolding("reply")
            _ = message.reply(msgid: message.msgid, fileDescriptors: [readEnd], before: .distantFuture)
            close(readEnd)
        }
    }

    /// A raw connection to `name` whose first message (no descriptors) its source has handled:
    /// the connection is then the publishing loop's conversation socket.
    private func conversingConnection(to directory: NameDirectory, name: String, carried: Collector<Int>) -> Int32 {
        let fd = rawConnection(to: directory, name: name)
        sendRawFrame(CrossProcessFrame(kind: .message, msgid: 1), to: fd)
        #expect(carried.wait(for: 1))
        return fd
    }

    @Test func aPublisherAnnouncesOnceBeforeItsFirstReplyWithDescriptors() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try makeReplyingPublisher(directory, name: "announce-replies", carried: Collector<Int>())
        defer { publisher.stop() }
        let fd = rawConnection(to: directory, name: "announce-replies")
        defer { close(fd) }
        for id in [1, 2] as [UInt64] {
            sendRawFrame(CrossProcessFrame(kind: .message, flags: .request, msgid: UInt32(id), firstID: id), to: fd)
        }
        let frames = (0..<3).compactMap { _ in readFrame(from: fd) }
        #expect(frames.map(\.frame.kind) == [.descriptors, .reply, .reply])
        #expect(frames.map(\.frame.firstID) == [0, 1, 2])
        #expect(frames.map(\.descriptors.count) == [0, 1, 1])
        for frame in frames {
            guard let received = frame.descriptors.first?.take() else { continue }
            #expect(Pipes.readAll(received) == "reply")
            close(received)
        }
    }

    /// Unannounced descriptors reach the publisher through either read: the batch (`recvmmsg`,
    /// with control buffers: they arrive and are closed) or a spin's read of one frame (`recv`:
    /// the kernel closes them). Either way the peer is disconnected and counted.
    @Test(arguments: [false, true])
    func aPublisherRefusesDescriptorsNobodyAnnounced(bySpinRead: Bool) throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let carried = Collector<Int>()
        let publisher = try makeReplyingPublisher(directory, name: "unannounced", carried: carried)
        defer { publisher.stop() }
        let thread = publisher.thread
        let fd = conversingConnection(to: directory, name: "unannounced", carried: carried)
        defer { close(fd) }
        let readEnd = Pipes.pipeHolding("x")
        let pipes: Set<UInt64> = [Pipes.pipeID(readEnd)]
        if bySpinRead {
            try thread.loop.performAndWait {
                sendRawFrame(CrossProcessFrame(kind: .message, msgid: 2, descriptorCount: 1), descriptors: [readEnd], to: fd)
                thread.loop.spinReadsSincePoll = 0
                #expect(thread.loop.readConversationSocket() == .read)
            }
        } else {
            sendRawFrame(CrossProcessFrame(kind: .message, msgid: 2, descriptorCount: 1), descriptors: [readEnd], to: fd)
        }
        close(readEnd)
        #expect(publisher.waitForDisconnect())
        guard case .protocolViolation(let why) = publisher.disconnects.values.first else {
            Issue.record("expected a protocol violation, got \(publisher.disconnects.values)")
            return
        }
        #expect(why.contains("before the peer announced them"))
        #expect(publisher.published.statistics.framesRejected == 1)
        #expect(carried.values == [0])
        #expect(eventually { Pipes.openDescriptors(of: pipes) == 0 })
    }

    /// After the announcement a spin's read takes descriptors too (its one frame now with a
    /// control buffer): the announcement itself is read like any frame and delivers nothing.
    @Test func aSpinReadTakesDescriptorsOnceAnnounced() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let carried = Collector<Int>()
        let publisher = try makeReplyingPublisher(directory, name: "announced", carried: carried)
        defer { publisher.stop() }
        let thread = publisher.thread
        let fd = conversingConnection(to: directory, name: "announced", carried: carried)
        defer { close(fd) }
        let readEnd = Pipes.pipeHolding("x")
        let found = try thread.loop.performAndWait { () -> [PortRunLoop.SpinRead] in
            announceDescriptors(on: fd)
            sendRawFrame(CrossProcessFrame(kind: .message, msgid: 2, descriptorCount: 1), descriptors: [readEnd], to: fd)
            thread.loop.spinReadsSincePoll = 0
            return (0..<3).map { _ in thread.loop.readConversationSocket() }
        }
        close(readEnd)
        #expect(found == [.read, .read, .empty])
        #expect(carried.wait(for: 2))
        #expect(carried.values == [0, 1])
        #expect(publisher.published.statistics.framesRejected == 0)
    }

    // MARK: The remote port's side

    @Test func aRemotePortAnnouncesOnceBeforeItsFirstRequestWithDescriptors() throws {
        let (port, peer) = try makePairedRemotePort(credits: 8, invalidatedByItsEnd: true)
        defer { port.invalidate(); close(peer) }
        // The replies are in the socket before the requests are sent (request ids start at 1).
        sendRawFrame(CrossProcessFrame(kind: .reply, msgid: 1, firstID: 1), to: peer)
        sendRawFrame(CrossProcessFrame(kind: .reply, msgid: 2, firstID: 2), to: peer)
        for msgid in [1, 2] as [UInt32] {
            let readEnd = Pipes.pipeHolding("request")
            let reply = try port.sendRequest(msgid: msgid, fileDescriptors: [readEnd], sendTimeout: .seconds(10),
                                             receiveTimeout: .seconds(10))
            close(readEnd)
            #expect(reply.msgid == msgid)
        }
        let frames = (0..<3).compactMap { _ in readFrame(from: peer) }
        #expect(frames.map(\.frame.kind) == [.descriptors, .message, .message])
        #expect(frames.map(\.frame.firstID) == [0, 1, 2])
        #expect(frames.map(\.descriptors.count) == [0, 1, 1])
        for frame in frames {
            guard let received = frame.descriptors.first?.take() else { continue }
            #expect(Pipes.readAll(received) == "request")
            close(received)
        }
    }

    @Test func aRemotePortTakesDescriptorsOnceAnnounced() throws {
        let (port, peer) = try makePairedRemotePort(credits: 8, invalidatedByItsEnd: true)
        defer { port.invalidate(); close(peer) }
        let readEnd = Pipes.pipeHolding("announced")
        announceDescriptors(on: peer)
        sendRawFrame(CrossProcessFrame(kind: .reply, msgid: 7, firstID: 1, descriptorCount: 1), descriptors: [readEnd], to: peer)
        close(readEnd)
        let reply = try port.sendRequest(msgid: 7, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
        guard let received = reply.fileDescriptors.first?.take() else {
            Issue.record("the reply carried no descriptor")
            return
        }
        #expect(Pipes.readAll(received) == "announced")
        close(received)
    }

    @Test func aRemotePortRefusesDescriptorsThePublisherDidNotAnnounce() throws {
        let (port, peer) = try makePairedRemotePort(credits: 8, invalidatedByItsEnd: true)
        defer { close(peer) }
        let reason = Recorder<MessagePort.InvalidationReason>()
        let invalidated = Signal()
        // No loop: one would read the socket itself (the request's own read is the one tested).
        port.setInvalidationHandler { reason.append($0); invalidated.fire() }
        let readEnd = Pipes.pipeHolding("unannounced")
        let pipes: Set<UInt64> = [Pipes.pipeID(readEnd)]
        sendRawFrame(CrossProcessFrame(kind: .reply, msgid: 7, firstID: 1, descriptorCount: 1), descriptors: [readEnd], to: peer)
        close(readEnd)
        #expect(throws: CrossProcessPortError.peerDied) {
            try port.sendRequest(msgid: 7, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
        }
        #expect(invalidated.wait(seconds: 10))
        guard case .protocolViolation(let why) = reason.values.first else {
            Issue.record("expected a protocol violation, got \(reason.values)")
            return
        }
        #expect(why.contains("before the publisher announced them"))
        #expect(!port.isValid)
        // `recv` took no control data: the kernel closed the descriptor it brought.
        #expect(eventually { Pipes.openDescriptors(of: pipes) == 0 })
    }
}
