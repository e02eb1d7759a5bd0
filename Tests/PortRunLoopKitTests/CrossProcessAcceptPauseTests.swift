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
/// and its message delivered. The publisher's CPU while exhausted is measured.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessAcceptPauseTests {
    /// The `acceptFailures` count in the publisher's answer to `stats`, or nil.
    private static func acceptFailures(_ publisher: CrossProcessProbeProcess) -> Int? {
        guard let line = publisher.ask("stats", answerStartsWith: "STATS"),
              let range = line.range(of: "acceptFailures: ") else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    /// The publisher's CPU time so far (user and system), in seconds, or nil.
    private static func cpuSeconds(_ publisher: CrossProcessProbeProcess) -> Double? {
        guard let line = publisher.ask("cpu", answerStartsWith: "CPU"),
              let micros = Int(line.dropFirst("CPU ".count)) else { return nil }
        return Double(micros) / 1e6
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
        #expect(eventually(seconds: 10) { (Self.acceptFailures(publisher) ?? 0) >= 2 },
                "accept should fail, and be retried after each pause")

        // Exhausted, with a peer waiting on the readable listener: over a window of five pauses
        // the publisher's CPU stays near idle. (The window is a span to measure over, not a wait
        // for an event: nothing is expected to happen in it.) A loop that watched the listener
        // while accepting failed would spend the whole window in accept(2).
        let window = 5 * PublishedMessagePort.acceptPause.seconds
        let cpuBefore = try #require(Self.cpuSeconds(publisher))
        let windowStart = Date()
        Thread.sleep(forTimeInterval: window)
        let cpuAfter = try #require(Self.cpuSeconds(publisher))
        let measured = Date().timeIntervalSince(windowStart)
        let share = (cpuAfter - cpuBefore) / measured
        #expect(share < 0.1, "the publisher used \(Int(share * 100))% of a CPU while out of descriptors")

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
