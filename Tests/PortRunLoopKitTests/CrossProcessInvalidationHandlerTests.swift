import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `MessagePort.setInvalidationHandler(on:_:)` across processes: the publisher's invalidation and
/// its death (SIGKILL) reach a remote port's handler on the reading loop's thread with no send,
/// with the reason (X6, X7).
@Suite(.serialized) struct CrossProcessInvalidationHandlerTests {
    /// What a port's invalidation handler saw: each reason, and whether it ran on `loop`'s thread.
    final class HandlerWatch: Sendable {
        typealias Report = (reason: MessagePort.InvalidationReason, onLoop: Bool)
        let reports = Recorder<Report>()
        let called = Signal()

        /// Sets `port`'s handler, to run on `given` (nil: the port's own loop), expected on `loop`.
        init(_ port: MessagePort, on given: PortRunLoop? = nil, expectedOn loop: PortRunLoop) {
            port.setInvalidationHandler(on: given) { [reports, called] reason in
                reports.append((reason, loop.isCurrentThread))
                called.fire()
            }
        }

        var first: Report? { reports.values.first }
    }

    @Test func thePublishersInvalidationRunsTheRemoteHandlerOnTheReadingLoop() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "withdrawn", "5"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let reader = try RunLoopThread(name: "xproc-reader")
        defer { reader.stop() }
        let remote = try directory.registry.remotePort(named: "withdrawn", readingOn: reader.loop)
        let watch = HandlerWatch(remote, expectedOn: reader.loop)
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 1))
        #expect(publisher.waitForLine(startingWith: "MSG 1") != nil)
        publisher.tell("invalidate")
        #expect(watch.called.wait(seconds: 10))
        let report = watch.first
        #expect(report?.reason == .publisherWithdrew)
        #expect(report?.onLoop == true)
        #expect(!remote.isValid)
        #expect(!remote.send(before: Date(timeIntervalSinceNow: 1), msgid: 2))
        #expect(throws: CrossProcessPortError.invalidPort) {
            _ = try remote.sendRequest(sendTimeout: .seconds(1), receiveTimeout: .seconds(1))
        }
        try reader.loop.performAndWait {} // anything queued after the handler has run
        #expect(watch.reports.count == 1)
    }

    @Test func aKilledPublisherRunsTheRemoteHandlerWithNoSend() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "killed", "5"])
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let reader = try RunLoopThread(name: "xproc-reader")
        defer { reader.stop() }
        let remote = try directory.registry.remotePort(named: "killed", readingOn: reader.loop)
        let watch = HandlerWatch(remote, expectedOn: reader.loop)
        let start = Date()
        publisher.kill9()
        #expect(watch.called.wait(seconds: 10))
        #expect(Date().timeIntervalSince(start) < 10)
        let report = watch.first
        #expect(report?.reason == .peerDied)
        #expect(report?.onLoop == true)
        #expect(!remote.isValid)
        #expect(throws: CrossProcessPortError.peerDied) {
            _ = try remote.sendRequest(sendTimeout: .seconds(1), receiveTimeout: .seconds(1))
        }
    }

    @Test func aLoopGivenWithTheHandlerWatchesARemotePortNoLoopReads() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "unread", "5"])
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let watcher = try RunLoopThread(name: "xproc-watcher")
        defer { watcher.stop() }
        let remote = try directory.registry.remotePort(named: "unread") // no reading loop
        let watch = HandlerWatch(remote, on: watcher.loop, expectedOn: watcher.loop)
        publisher.kill9()
        #expect(watch.called.wait(seconds: 10))
        let report = watch.first
        #expect(report?.reason == .peerDied)
        #expect(report?.onLoop == true)
    }

    @Test func invalidatingARemotePortRunsItsHandlerOnceWithInvalidated() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "mine", "5"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let reader = try RunLoopThread(name: "xproc-reader")
        defer { reader.stop() }
        let remote = try directory.registry.remotePort(named: "mine", readingOn: reader.loop)
        let watch = HandlerWatch(remote, expectedOn: reader.loop)
        remote.invalidate()
        remote.invalidate()
        #expect(watch.called.wait(seconds: 10))
        #expect(publisher.waitForLine(startingWith: "GONE") == "GONE closed by the peer")
        try reader.loop.performAndWait {}
        #expect(watch.reports.count == 1)
        let report = watch.first
        #expect(report?.reason == .invalidated)
        #expect(report?.onLoop == true)
    }
}
