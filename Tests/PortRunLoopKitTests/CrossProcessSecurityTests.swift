#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Who may connect (`SO_PEERCRED`, the allow-list, a peer that cannot be identified), and hostile frames: oversized, malformed and
/// beyond the credits disconnect their peer and are counted; the port keeps working (X9, X10).
@Suite(.serialized) struct CrossProcessSecurityTests {
    /// Queue limit 2: a peer gets two credits (the credits test counts on it).
    static func publisher(_ directory: NameDirectory, name: String, options: CrossProcessPortOptions) throws -> TestPublisher {
        try TestPublisher(directory, name: name, options: options, queueLimit: 2)
    }

    @Test func aPeerWhoseUserIDIsNotAllowedIsRefused() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // An allow-list without our own uid: the probe (same uid) is refused at accept.
        let publisher = try Self.publisher(directory, name: "strict", options: CrossProcessPortOptions(allowedUserIDs: [getuid() &+ 12345]))
        defer { publisher.stop() }
        let sender = try CrossProcessProbeProcess(["send", directory.path, "strict", "10", "2000"])
        #expect(sender.waitForLine(startingWith: "VALID", seconds: 30) == "VALID 0")
        #expect(sender.lines(startingWith: "REFUSED").count >= 8) // at most the first credits were written
        #expect(publisher.published.statistics.connectionsRefused == 1)
        #expect(publisher.published.statistics.connectionsAccepted == 0)
        #expect(publisher.received.values.isEmpty)
    }

    @Test func aClientRefusesAPublisherWhoseUserIDIsNotAllowed() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Self.publisher(directory, name: "suspect", options: CrossProcessPortOptions())
        defer { publisher.stop() }
        #expect(throws: CrossProcessPortError.peerNotAllowed(uid: getuid())) {
            _ = try directory.registry.remotePort(named: "suspect", options: CrossProcessPortOptions(allowedUserIDs: [getuid() &+ 1]))
        }
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
                   "needs root and setpriv, to run the peer as another user"))
    func aProcessOfAnotherUserCannotReachThePort() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Self.publisher(directory, name: "private", options: CrossProcessPortOptions())
        defer { publisher.stop() }
        let foreign = try CrossProcessProbeProcess(["send", directory.path, "private", "1", "1000"],
                                                   launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
        let line = foreign.waitForLine(startingWith: "ERROR")
        #expect(line?.contains("unsafe cross-process port directory") == true || line?.contains("Permission denied") == true,
                "\(foreign.printed)")
        _ = foreign.waitForExit()
        #expect(publisher.published.statistics.connectionsAccepted == 0)
    }

    @Test func aPeerWhoseCredentialsCannotBeReadIsRefusedCountedAndLogged() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let recorder = LogRecorder()
        // The owner thread starts under the refusal: its accept cannot learn who connected.
        let thread = try onRefusingThread(.peerCredentials(errno: EACCES)) { try RunLoopThread(name: "xproc-owner") }
        defer { thread.stop() }
        let port = MessagePort()
        port.setHandler { _ in }
        thread.loop.add(port, forMode: .default)
        let published = try MessagePortNameRegistry(directory: directory.path, logger: recorder.logger)
            .publish(port, as: "anonymous", on: thread.loop)
        defer { published.unpublish() }
        let fd = rawConnection(to: directory, name: "anonymous")
        defer { close(fd) }
        #expect(readsEndOfFile(fd)) // closed by the publisher: end of file, not the timeout
        try thread.loop.performAndWait(timeout: .seconds(10)) {} // the accepting turn is over: it has logged
        #expect(published.statistics.connectionsRefused == 1)
        #expect(published.statistics.connectionsAccepted == 0)
        let warnings = recorder.entries.filter { $0.level == .warning && $0.message.contains("could not be identified") }
        #expect(warnings.count == 1)
        #expect(warnings.first?[LogKey.error] == "errno \(EACCES)")
    }

    @Test func aClientThatCannotReadThePublishersCredentialsThrows() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Self.publisher(directory, name: "unverifiable", options: CrossProcessPortOptions())
        defer { publisher.stop() }
        let failure = try onRefusingThread(.peerCredentials(errno: EACCES)) {
            thrownError { () throws(CrossProcessPortError) in _ = try directory.registry.remotePort(named: "unverifiable") }
        }
        #expect(failure == .systemCallFailed("getsockopt(SO_PEERCRED)", errno: EACCES))
        // Unaffected threads still connect.
        let remote = try directory.registry.remotePort(named: "unverifiable")
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 3))
        #expect(publisher.waitForMessages(1))
        #expect(publisher.received.values == [3])
    }

    @Test func aSenderRefusesAMessageLargerThanThePublishersMaximum() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Self.publisher(directory, name: "small", options: CrossProcessPortOptions(maximumMessageSize: 1024))
        defer { publisher.stop() }
        let remote = try directory.registry.remotePort(named: "small")
        #expect(!remote.send(before: Date(timeIntervalSinceNow: 1), components: [Data(count: 1024)]))
        #expect(throws: CrossProcessPortError.messageTooLarge(size: CrossProcessFrame.headerSize + 4 + 2000, limit: 1024)) {
            _ = try remote.sendRequest(components: [Data(count: 2000)], sendTimeout: .seconds(1), receiveTimeout: .seconds(1))
        }
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 5, components: [Data(count: 1024 - CrossProcessFrame.headerSize - 4)]))
        #expect(publisher.waitForMessages(1))
        #expect(publisher.received.values == [5])
    }

    @Test func anOversizedFrameDisconnectsItsPeerAndIsCounted() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Self.publisher(directory, name: "big", options: CrossProcessPortOptions(maximumMessageSize: 1024))
        defer { publisher.stop() }
        let fd = rawConnection(to: directory, name: "big")
        defer { close(fd) }
        let frame = CrossProcessFrame(kind: .message, msgid: 1, components: [Data(count: 4000)]).encoded()
        #expect(frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == frame.count)
        #expect(publisher.waitForDisconnect())
        guard case .protocolViolation(let why) = publisher.disconnects.values.first else {
            Issue.record("expected a protocol violation, got \(publisher.disconnects.values)")
            return
        }
        #expect(why.contains("exceeds the maximum"))
        #expect(publisher.published.statistics.framesRejected == 1)
        #expect(publisher.received.values.isEmpty)
        try expectStillWorks(directory, "big", publisher)
    }

    @Test(arguments: [
        Array("not a frame at all, just some text".utf8),
        Array(repeating: UInt8(0), count: 8),
        Array("PRLX".utf8) + [9, 1] + Array(repeating: 0, count: CrossProcessFrame.headerSize - 6), // unknown version
        CrossProcessFrame(kind: .credit, firstID: 1).encoded(), // a kind only the publisher sends
    ])
    func aMalformedFrameDisconnectsItsPeerAndIsCounted(bytes: [UInt8]) throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Self.publisher(directory, name: "junk", options: CrossProcessPortOptions())
        defer { publisher.stop() }
        let fd = rawConnection(to: directory, name: "junk")
        defer { close(fd) }
        #expect(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
        #expect(publisher.waitForDisconnect())
        guard case .protocolViolation = publisher.disconnects.values.first else {
            Issue.record("expected a protocol violation, got \(publisher.disconnects.values)")
            return
        }
        #expect(publisher.published.statistics.framesRejected == 1)
        // The publisher closed its end: the raw peer reads end of file.
        var byte: UInt8 = 0
        #expect(recv(fd, &byte, 1, 0) == 0)
        try expectStillWorks(directory, "junk", publisher)
    }

    @Test func aMessageBeyondTheCreditsDisconnectsItsPeer() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Self.publisher(directory, name: "greedy", options: CrossProcessPortOptions())
        defer { publisher.stop() }
        let release = holdLoop(publisher.thread)
        let fd = rawConnection(to: directory, name: "greedy")
        defer { close(fd) }
        // Queue limit 2: the third message before any credit came back is a violation.
        for msgid in UInt32(0)..<3 {
            let frame = CrossProcessFrame(kind: .message, msgid: msgid).encoded()
            #expect(frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == frame.count)
        }
        release.fire()
        #expect(publisher.waitForDisconnect())
        guard case .protocolViolation(let why) = publisher.disconnects.values.first else {
            Issue.record("expected a protocol violation, got \(publisher.disconnects.values)")
            return
        }
        #expect(why.contains("credits"))
        #expect(publisher.waitForMessages(2))
        #expect(publisher.received.values == [0, 1]) // the two within the credits are delivered
    }

    /// After a hostile peer was thrown out, a well-behaved one still gets through.
    private func expectStillWorks(_ directory: NameDirectory, _ name: String, _ publisher: TestPublisher) throws {
        let remote = try directory.registry.remotePort(named: name)
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 77))
        #expect(publisher.waitForMessages(1))
        #expect(publisher.received.values.last == 77)
    }
}
