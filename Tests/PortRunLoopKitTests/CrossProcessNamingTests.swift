#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Publishing and looking up names: validation, the directory check, a live name refused, a dead
/// publisher's name reclaimed (X1, X2).
@Suite(.serialized) struct CrossProcessNamingTests {
    @Test(arguments: ["", ".hidden", "a/b", "a b", "ü", "x\0y", String(repeating: "n", count: 200)])
    func invalidNamesAreRefused(name: String) throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let port = MessagePort()
        #expect {
            _ = try directory.registry.publish(port, as: name, on: PortRunLoop.main)
        } throws: { error in
            guard case .invalidName = error as? CrossProcessPortError else { return false }
            return true
        }
        #expect {
            _ = try directory.registry.remotePort(named: name)
        } throws: { error in
            guard case .invalidName = error as? CrossProcessPortError else { return false }
            return true
        }
    }

    @Test func aDirectoryOthersCanEnterIsRefused() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        chmod(directory.path, 0o755)
        #expect {
            _ = try directory.registry.publish(MessagePort(), as: "open", on: PortRunLoop.main)
        } throws: { error in
            guard case .unsafeDirectory(_, let reason) = error as? CrossProcessPortError else { return false }
            return reason.contains("755")
        }
    }

    // Only root can give a directory away: reported as skipped otherwise, not passed.
    @Test(.enabled(if: getuid() == 0, "needs root, to give the directory to another user"))
    func aDirectoryOfAnotherUserIsRefused() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        chown(directory.path, 65534, 65534)
        #expect {
            _ = try directory.registry.remotePort(named: "theirs")
        } throws: { error in
            guard case .unsafeDirectory(_, let reason) = error as? CrossProcessPortError else { return false }
            return reason.contains("65534")
        }
    }

    @Test func aMissingDirectoryIsMadePrivate() throws {
        let parent = NameDirectory()
        defer { parent.remove() }
        let path = parent.path + "/made"
        let registry = MessagePortNameRegistry(directory: path)
        let thread = try RunLoopThread(name: "xproc-owner")
        defer { thread.stop() }
        let port = MessagePort()
        thread.loop.add(port, forMode: .default)
        let published = try registry.publish(port, as: "p", on: thread.loop)
        defer { published.unpublish() }
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let socket = try FileManager.default.attributesOfItem(atPath: published.socketPath)
        #expect((socket[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aNameOfALiveProcessIsRefusedAndAnUnknownNameIsNotPublished() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "taken", "5"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        #expect(throws: CrossProcessPortError.nameInUse("taken")) {
            _ = try directory.registry.publish(MessagePort(), as: "taken", on: PortRunLoop.main)
        }
        #expect(throws: CrossProcessPortError.notPublished("nobody")) {
            _ = try directory.registry.remotePort(named: "nobody")
        }
        // Within one process too: the second publisher of a name is refused.
        let thread = try RunLoopThread(name: "xproc-owner")
        defer { thread.stop() }
        let port = MessagePort()
        let first = try directory.registry.publish(port, as: "mine", on: thread.loop)
        #expect(throws: CrossProcessPortError.nameInUse("mine")) {
            _ = try directory.registry.publish(MessagePort(), as: "mine", on: thread.loop)
        }
        // Unpublished on the loop's thread, the name is free when the call returns.
        try thread.loop.performAndWait { first.unpublish() }
        let second = try directory.registry.publish(MessagePort(), as: "mine", on: thread.loop)
        try thread.loop.performAndWait { second.unpublish() }
    }

    /// The publishing loop's shutdown withdraws the name even when the port is scheduled in
    /// another loop (whose invalidation would otherwise be what withdraws it): the name is free,
    /// and a connected peer sees its connection end.
    @Test func thePublishingLoopsShutDownWithdrawsTheNameOfAPortScheduledElsewhere() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let setup = try PublishedElsewhere(directory, as: "elsewhere")
        defer { setup.owner.stop() }
        let (owner, publishing, port, published) = (setup.owner, setup.publishing, setup.port, setup.published)
        let peer = rawConnection(to: directory, name: "elsewhere")
        defer { close(peer) }
        try publishing.loop.performAndWait {} // accepted
        publishing.stop()
        #expect(!published.isPublished)
        #expect(readRawFrame(peer)?.kind == .closing) // withdrawn, as by unpublish()
        #expect(readsEndOfFile(peer))
        #expect(throws: CrossProcessPortError.notPublished("elsewhere")) {
            _ = try directory.registry.remotePort(named: "elsewhere")
        }
        #expect(port.isValid) // the port itself goes on, in its own loop
        let again = try directory.registry.publish(port, as: "elsewhere", on: owner.loop)
        try owner.loop.performAndWait { again.unpublish() }
    }

    /// A lookup that cannot read the publisher's record (`pread` fails) says so, rather than
    /// calling a live publisher unpublished.
    @Test func aRecordThatCannotBeReadIsASystemCallFailure() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-owner")
        defer { thread.stop() }
        let published = try directory.registry.publish(MessagePort(), as: "unreadable", on: thread.loop)
        defer { published.unpublish() }
        let failure = try onRefusingThread(.pread(errno: EIO)) {
            thrownError { () throws(CrossProcessPortError) in _ = try directory.registry.remotePort(named: "unreadable") }
        }
        #expect(failure == .systemCallFailed("pread(\(directory.path)/unreadable.lock)", errno: EIO))
    }

    /// A client reads only a lock record of its own wire format version: a publisher that
    /// recorded another one (another build of the library) is not found at lookup, rather than
    /// met by a first frame it cannot read.
    @Test func aPublisherOfAnotherWireFormatVersionIsNotFound() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-version")
        defer { thread.stop() }
        let published = try directory.registry.publish(MessagePort(), as: "versioned", on: thread.loop)
        defer { try? thread.loop.performAndWait { published.unpublish() } }
        let lockPath = directory.path + "/versioned.lock"
        let ours = try String(contentsOfFile: lockPath, encoding: .utf8)
        var fields = ours.split(separator: " ").map(String.init)
        guard fields.count == 4, fields[0] == "PRLX", let version = Int(fields[1]) else {
            Issue.record("not a publisher's record: \(ours)")
            return
        }
        fields[1] = "\(version + 1)"
        let other = fields.joined(separator: " ")
        // Rewritten in place: the publisher holds its lock on this file.
        let fd = open(lockPath, O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        #expect(Array(other.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == other.utf8.count)
        close(fd)
        #expect(throws: CrossProcessPortError.notPublished("versioned")) {
            _ = try directory.registry.remotePort(named: "versioned")
        }
        // Its own version again: found.
        let restore = open(lockPath, O_WRONLY | O_TRUNC)
        #expect(Array(ours.utf8).withUnsafeBytes { write(restore, $0.baseAddress, $0.count) } == ours.utf8.count)
        close(restore)
        let remote = try directory.registry.remotePort(named: "versioned")
        #expect(remote.isValid)
        remote.invalidate()
    }

    @Test func theNameOfAKilledPublisherIsReclaimed() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "phoenix", "5"])
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        publisher.kill9()
        // The socket file is left behind, but nobody listens: not published.
        #expect(FileManager.default.fileExists(atPath: directory.path + "/phoenix.sock"))
        #expect(throws: CrossProcessPortError.notPublished("phoenix")) {
            _ = try directory.registry.remotePort(named: "phoenix")
        }
        let thread = try RunLoopThread(name: "xproc-owner")
        defer { thread.stop() }
        let port = MessagePort()
        let received = Signal()
        port.setHandler { if $0.msgid == 42 { received.fire() } }
        thread.loop.add(port, forMode: .default)
        let published = try directory.registry.publish(port, as: "phoenix", on: thread.loop)
        defer { published.unpublish() }
        let remote = try directory.registry.remotePort(named: "phoenix")
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 42))
        #expect(received.wait(seconds: 10))
    }
}
