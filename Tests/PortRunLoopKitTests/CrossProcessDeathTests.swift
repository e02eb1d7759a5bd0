#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Invalidation on either side, and SIGKILL of either process, seen by the other side within a
/// bounded time (X6, X7).
@Suite(.serialized) struct CrossProcessDeathTests {
    @Test func aKilledReceiverFailsTheSendersSendsAndRequests() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "victim", "5", "reply"])
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "victim")
        for index in 0..<10 { #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: UInt32(index))) }
        #expect(remote.isValid)
        publisher.kill9()
        let start = Date()
        // Whatever credits are left, a send fails once the socket reports the peer gone.
        var sends = 0
        while remote.send(before: Date(timeIntervalSinceNow: 5), msgid: 99) { sends += 1; if sends > 10 { break } }
        #expect(sends <= 5)
        #expect(Date().timeIntervalSince(start) < 4) // the end is seen at once, not at the send's date
        #expect(!remote.isValid)
        #expect(throws: CrossProcessPortError.peerDied) {
            _ = try remote.sendRequest(sendTimeout: .seconds(5), receiveTimeout: .seconds(5))
        }
    }

    @Test func aRequestWaitingForAReplyEndsWhenTheReceiverIsKilled() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "dies", "5"])
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "dies")
        let killer = Thread {
            _ = publisher.waitForLine(startingWith: "MSG 5")
            publisher.kill9()
        }
        killer.start()
        let start = Date()
        #expect(throws: CrossProcessPortError.peerDied) {
            _ = try remote.sendRequest(msgid: 5, sendTimeout: .seconds(10), receiveTimeout: .seconds(20))
        }
        #expect(Date().timeIntervalSince(start) < 15)
    }

    @Test func aKilledSenderIsReportedToThePublisherOnTheOwnerThread() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-owner")
        defer { thread.stop() }
        let port = MessagePort()
        let received = Recorder<UInt32>()
        port.setHandler { received.append($0.msgid) }
        thread.loop.add(port, forMode: .default)
        let published = try directory.registry.publish(port, as: "watcher", on: thread.loop)
        defer { published.unpublish() }
        let gone = Signal()
        let reports = Recorder<(reason: CrossProcessPeer.DisconnectReason, pid: Int32, onOwner: Bool)>()
        let loop = thread.loop
        published.setPeerDisconnectHandler { peer, reason in
            reports.append((reason, peer.processID, loop.isCurrentThread))
            gone.fire()
        }
        let sender = try CrossProcessProbeProcess(["send", directory.path, "watcher", "-1", "1000"])
        #expect(sender.waitForLine(startingWith: "SENT 50") != nil)
        #expect(published.connectedPeers.map(\.processID) == [sender.processID])
        sender.kill9()
        #expect(gone.wait(seconds: 10))
        let report = reports.values.first
        #expect(report?.reason == .closed)
        #expect(report?.pid == sender.processID)
        #expect(report?.onOwner == true)
        // Counted before the handler is told.
        #expect(published.statistics.connectionsAccepted == 1)
        #expect(published.statistics.peersDisconnected == 1)
        #expect(published.statistics.framesRejected == 0)
        // What it sent before it died is delivered, in order, without gaps. (The frames read with
        // the end of file were queued before the report; a block queued now runs after them.)
        try thread.loop.performAndWait {}
        let values = received.values
        #expect(values == (0..<UInt32(values.count)).map { $0 })
        #expect(values.count >= 51)
        #expect(published.connectedPeers.isEmpty)
    }

    @Test func invalidatingThePublishedPortFailsTheSendersSends() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-owner")
        defer { thread.stop() }
        let port = MessagePort()
        port.setHandler { _ in }
        thread.loop.add(port, forMode: .default)
        let published = try directory.registry.publish(port, as: "closing", on: thread.loop)
        let sender = try CrossProcessProbeProcess(["send", directory.path, "closing", "100000", "1000"])
        #expect(sender.waitForLine(startingWith: "SENT 20") != nil)
        port.invalidate()
        #expect(sender.waitForLine(startingWith: "REFUSED") != nil)
        #expect(sender.waitForLine(startingWith: "VALID", seconds: 60) == "VALID 0")
        #expect(!published.isPublished)
        #expect(!FileManager.default.fileExists(atPath: published.socketPath))
        #expect(throws: CrossProcessPortError.notPublished("closing")) {
            _ = try directory.registry.remotePort(named: "closing")
        }
    }

    @Test func invalidatingARemotePortDisconnectsItFromThePublisher() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "peer", "5"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "peer")
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 1))
        #expect(publisher.waitForLine(startingWith: "MSG 1") != nil)
        remote.invalidate()
        #expect(!remote.isValid)
        #expect(!remote.send(before: Date(timeIntervalSinceNow: 1), msgid: 2))
        #expect(publisher.waitForLine(startingWith: "GONE") == "GONE closed by the peer")
    }
}
