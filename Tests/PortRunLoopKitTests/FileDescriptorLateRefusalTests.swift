#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A source the loop cannot register or re-arm after `watch` returned (the kernel refuses
/// `epoll_ctl(EPOLL_CTL_ADD)`, made to here by a seccomp filter on the loop's thread) is cancelled
/// with its error, and whatever the library built on it ends too, with a reason, instead of
/// waiting for a source that will never fire.
@Suite(.serialized, .timeLimit(.minutes(1))) struct FileDescriptorLateRefusalTests {
    /// A loop thread whose kernel refuses every `epoll_ctl(EPOLL_CTL_ADD)` from now on (its own
    /// events were added when it was made). `watch` from another thread still passes its check
    /// there; the registration the loop then makes is refused.
    static func refusingLoopThread(_ name: String) throws -> RunLoopThread {
        let thread = try RunLoopThread(name: name)
        try thread.loop.performAndWait(timeout: .seconds(10)) {
            try SyscallRefusal.anyEpollAdd(errno: ENOSPC).installOnCurrentThread()
        }
        return thread
    }

    /// `remote` became invalid because a loop could not watch its socket (waited for, bounded).
    static func expectEndedUnwatched(_ remote: MessagePort, _ reasons: Collector<MessagePort.InvalidationReason>) {
        #expect(reasons.wait(for: 1, seconds: 10))
        guard case .connectionFailed(let why) = reasons.values.first else {
            Issue.record("expected a failed connection, got \(reasons.values)")
            return
        }
        #expect(why.contains("could not watch its socket"))
        #expect(!remote.isValid)
    }

    @Test func aReArmTheKernelRefusesCancelsTheSourceAndTellsItsOwner() throws {
        let pipe = Pipe2()
        let outcome = try onFreshThread { () -> (cancelled: Bool, error: PortRunLoopError?, told: [PortRunLoopError], handled: Int) in
            let loop = PortRunLoop.current
            let other = RunLoop.Mode("late-refusal.other")
            loop.add(MessagePort(), forMode: other) // so `other` is not empty
            let told = Recorder<PortRunLoopError>()
            let handled = Recorder<Int>()
            let source = try loop.watch(fileDescriptor: pipe.readEnd, for: .read, inModes: [.default],
                                        onFailure: { told.append($0) }) { _ in handled.append(1) }
            pipe.write(1)
            // Ready while a run of another mode runs: set aside (`event_del`) until a run of its
            // own mode arms it again, which the kernel now refuses.
            _ = loop.run(mode: other, timeout: 0, returnAfterSourceHandled: false)
            try SyscallRefusal.anyEpollAdd(errno: ENOSPC).installOnCurrentThread()
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: -1))
            // The refusal's report to the owner was queued for the loop's next turn.
            loop.run(mode: .default, before: Date(timeIntervalSinceNow: -1))
            return (source.isCancelled, source.registrationError, told.values, handled.count)
        }
        #expect(outcome.cancelled)
        #expect(outcome.error == .eventRegistrationFailed)
        #expect(outcome.told == [.eventRegistrationFailed])
        #expect(outcome.handled == 0)
    }

    @Test func aPublicationWhoseListenerIsRefusedIsWithdrawn() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try Self.refusingLoopThread("late-refusal-owner")
        defer { thread.stop() }
        let (port, published, recorder) = try publishRecordingLog(directory, as: "deaf", on: thread.loop)
        // The first barrier runs after the listener's registration, which was refused and queued
        // its report to the publication; the second after that report.
        try thread.loop.performAndWait(timeout: .seconds(10)) {}
        try thread.loop.performAndWait(timeout: .seconds(10)) {}
        #expect(!published.isPublished)
        #expect(throws: CrossProcessPortError.notPublished("deaf")) {
            _ = try directory.registry.remotePort(named: "deaf")
        }
        let errors = recorder.entries.filter { $0.level == .error && $0.message.contains("could not watch its listener") }
        #expect(errors.count == 1)
        #expect(port.isValid) // the local port is untouched
    }

    @Test func aRemotePortWhoseReadingLoopRefusesItsSocketBecomesInvalid() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try TestPublisher(directory, name: "unread")
        defer { publisher.stop() }
        let reader = try Self.refusingLoopThread("late-refusal-reader")
        defer { reader.stop() }
        let remote = try directory.registry.remotePort(named: "unread", readingOn: reader.loop)
        let reasons = Collector<MessagePort.InvalidationReason>()
        remote.setInvalidationHandler(on: reader.loop) { reasons.append($0) }
        Self.expectEndedUnwatched(remote, reasons)
        #expect(throws: CrossProcessPortError.loopRefusedSocket(.eventRegistrationFailed)) {
            _ = try remote.sendRequest(msgid: 1, components: [], sendTimeout: .seconds(1), receiveTimeout: .seconds(1))
        }
    }

    @Test func aLoopThatRefusesToWatchForTheEndEndsTheConnectionAndSaysSo() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try TestPublisher(directory, name: "unwatched")
        defer { publisher.stop() }
        let watcher = try RunLoopThread(name: "late-refusal-watcher")
        defer { watcher.stop() }
        let remote = try directory.registry.remotePort(named: "unwatched")
        let reasons = Collector<MessagePort.InvalidationReason>()
        // `watch` asks this epoll instance whether epoll takes an fd: the thread that sets the
        // handler, where that check runs, is told no.
        let probe = try #require(System.probeEpoll())
        try onRefusingThread(.epollAdd(epoll: probe, errno: EPERM)) {
            remote.setInvalidationHandler(on: watcher.loop) { reasons.append($0) }
        }
        Self.expectEndedUnwatched(remote, reasons)
    }
}
