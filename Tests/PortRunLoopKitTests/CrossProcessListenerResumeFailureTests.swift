#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A publication whose `accept` failed for want of descriptors pauses accepting, then watches its
/// listener again; a loop that refuses to watch the listener then withdraws the name (logged at
/// `.error`) rather than leave peers queued in a backlog nobody accepts from. The failures are
/// made by seccomp filters on the publishing loop's thread, for the listener's fd only.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessListenerResumeFailureTests {
    @Test func aListenerThatCannotBeWatchedAfterAnAcceptPauseWithdrawsTheName() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-owner")
        defer { thread.stop() }
        let (port, published, recorder) = try publishRecordingLog(directory, as: "paused", on: thread.loop)
        let listener = try #require(socketDescriptors(at: published.socketPath, .listener).first)
        // From now on the owner's thread can neither accept on the listener (out of descriptors)
        // nor have the listener watched again.
        try thread.loop.performAndWait(timeout: .seconds(10)) {
            try SyscallRefusal.accept(listener: listener, errno: EMFILE).installOnCurrentThread()
            try SyscallRefusal.epollAddOf(fileDescriptor: listener, errno: EPERM).installOnCurrentThread()
        }

        // A client connects into the backlog; the accept fails, accepting pauses, and the watch
        // that would resume it is refused.
        let client = try RunLoopThread(name: "xproc-client")
        defer { client.stop() }
        let remote = try directory.registry.remotePort(named: "paused")
        let ends = Collector<MessagePort.InvalidationReason>()
        remote.setInvalidationHandler(on: client.loop) { ends.append($0) }

        // The listener is closed with the client still in its backlog: the client sees the end.
        #expect(ends.wait(for: 1, seconds: 10))
        #expect(ends.values == [.peerDied])
        #expect(!remote.isValid)
        #expect(!published.isPublished)
        #expect(throws: CrossProcessPortError.notPublished("paused")) {
            _ = try directory.registry.remotePort(named: "paused")
        }
        let statistics = published.statistics
        #expect(statistics.acceptFailures == 1)
        #expect(statistics.connectionsAccepted == 0)
        let entries = recorder.entries
        #expect(entries.filter { $0.level == .warning && $0.message.contains("could not accept a connection") }.count == 1)
        let withdrawals = entries.filter { $0.level == .error && $0.message.contains("could not watch its listener") }
        #expect(withdrawals.count == 1)
        #expect(port.isValid) // the local port is untouched
    }

    /// The publishing loop shuts down while accepting is paused (the listener has no source then):
    /// the name is withdrawn all the same, also with the port scheduled in another loop.
    @Test func aLoopThatShutsDownDuringAnAcceptPauseWithdrawsTheName() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let setup = try PublishedElsewhere(directory, as: "paused-shutdown")
        defer { setup.owner.stop() }
        let (publishing, port, published) = (setup.publishing, setup.port, setup.published)
        let listener = try #require(socketDescriptors(at: published.socketPath, .listener).first)
        try publishing.loop.performAndWait(timeout: .seconds(10)) {
            try SyscallRefusal.accept(listener: listener, errno: EMFILE).installOnCurrentThread()
        }
        let peer = rawConnection(to: directory, name: "paused-shutdown") // into the backlog
        defer { close(peer) }
        #expect(eventually { published.statistics.acceptFailures >= 1 })
        publishing.stop() // during a pause (100 ms) but for the instant each retry takes
        #expect(!published.isPublished)
        #expect(throws: CrossProcessPortError.notPublished("paused-shutdown")) {
            _ = try directory.registry.remotePort(named: "paused-shutdown")
        }
        #expect(port.isValid)
    }
}
