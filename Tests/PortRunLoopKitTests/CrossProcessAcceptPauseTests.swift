#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A publisher out of descriptors: `accept` fails while a peer waits in the listener's backlog.
/// Each failure is counted and pauses accepting for `PublishedMessagePort.acceptPause`, so the
/// loop does not spin on the readable listener; once descriptors are free the peer is accepted
/// and its message delivered.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessAcceptPauseTests {
    /// The `acceptFailures` count in a `STATS` line, or nil.
    private static func acceptFailures(_ publisher: CrossProcessProbeProcess) -> Int? {
        let before = publisher.lines(startingWith: "STATS").count
        publisher.tell("stats")
        let deadline = Date(timeIntervalSinceNow: 10)
        while publisher.lines(startingWith: "STATS").count == before, Date() < deadline { usleep(1000) }
        guard let line = publisher.lines(startingWith: "STATS").last,
              let range = line.range(of: "acceptFailures: ") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    @Test func acceptingPausesWhileDescriptorsRunOutAndResumesAfter() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "starved", "5"])
        defer { publisher.closeInput() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        publisher.tell("fdlimit")
        try #require(publisher.waitForLine(startingWith: "LIMITED") != nil)

        // The peer connects (into the backlog) and sends; the publisher cannot accept it.
        let connected = Date()
        let remote = try directory.registry.remotePort(named: "starved")
        #expect(remote.send(before: Date(timeIntervalSinceNow: 5), msgid: 7))
        #expect(eventually(seconds: 10) { (Self.acceptFailures(publisher) ?? 0) >= 3 },
                "accept should fail, and be retried after each pause")
        // Paced by the pause, not by the loop's turns: at most one failure per pause (and one at
        // once), where a loop watching the readable listener would fail thousands of times.
        let failures = try #require(Self.acceptFailures(publisher))
        let allowed = Int(Date().timeIntervalSince(connected) / PublishedMessagePort.acceptPause.seconds) + 2
        #expect(failures <= allowed, "\(failures) failures in \(Date().timeIntervalSince(connected)) s")
        #expect(publisher.lines(startingWith: "MSG").isEmpty)

        publisher.tell("fdunlimit")
        #expect(publisher.waitForLine(startingWith: "UNLIMITED") != nil)
        #expect(publisher.waitForLine(startingWith: "MSG 7", seconds: 10) != nil, "the waiting peer is accepted once descriptors are free")
        #expect(remote.isValid)
        remote.invalidate()
    }
}
