#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Credits a publisher still owes a peer when its loop shuts down are no failure of the
/// connection: the shutdown invalidates the port, which unpublishes it, and the connection ends as
/// unpublished (not as `connectionFailed`) even though the credits could not be sent back.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessCreditsAtShutdownTests {
    @Test func creditsOwedWhenThePublishingLoopShutsDownEndTheConnectionAsUnpublished() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let disconnects = Collector<CrossProcessPeer.DisconnectReason>()
        let taken = Collector<UInt32>()
        // The loop is this thread's own, run here turn by turn and shut down when the thread
        // exits. A credit frame is a bare header: on this thread its send finds no room (EAGAIN),
        // so the flush, when it runs, has to wait for the socket to become writable.
        let (published, remote) = try onRefusingThread(.send(length: UInt32(CrossProcessFrame.headerSize), errno: EAGAIN),
                                                       name: "xproc-owner") { () -> (PublishedMessagePort, MessagePort) in
            let loop = PortRunLoop.current
            // Queue limit 4: the second message taken makes half the credits owed, which queues a flush.
            let port = MessagePort(queueLimit: 4)
            port.setHandler { taken.append($0.msgid) }
            loop.add(port, forMode: .default)
            let published = try directory.registry.publish(port, as: "owing", on: loop)
            published.setPeerDisconnectHandler { _, reason in disconnects.append(reason) }
            let remote = try directory.registry.remotePort(named: "owing")
            // One component each: not a bare header, so this thread may send them.
            for msgid: UInt32 in 1...2 {
                #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: msgid, components: [Data([1])]))
            }
            // Turn by turn until both messages were handled: the turn that delivered the second
            // queued the flush, and returned without running it.
            let deadline = Date(timeIntervalSinceNow: 10)
            while taken.values.count < 2, Date() < deadline { loop.run(mode: .default, before: deadline) }
            #expect(taken.values == [1, 2])
            #expect(disconnects.values.isEmpty)
            return (published, remote)
        }
        // The thread has exited, and its loop has shut down: the queued flush ran then, found no
        // room and could not wait for any; the shutdown then invalidated the port.
        #expect(disconnects.values == [.unpublished])
        let statistics = published.statistics
        #expect(statistics.peersDisconnected == 1)
        #expect(statistics.connectionsFailed == 0)
        #expect(statistics.framesRejected == 0)
        #expect(!published.isPublished)
        // The client sees the end.
        #expect(!remote.isValid)
    }
}
