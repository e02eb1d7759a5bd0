#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing

/// The answer times every cross-process frame carries, and what they tell the reading loop: how
/// soon an exchange turns around with both sides awake (the longer of the two sides' answer
/// times), which earns a loop's spin when the answer itself waited for the partner's wake-up.
@Suite(.timeLimit(.minutes(1))) struct AnswerTimingTests {
    @Test func aFrameSentBeforeAnyReadCarriesNoAnswer() {
        var timing = AnswerTiming()
        #expect(timing.answerTime(sendingAt: 100) == CrossProcessFrame.noAnswer)
    }

    @Test func aFrameCarriesTheTimeSinceThePeersLastFrameWasRead() {
        var timing = AnswerTiming()
        _ = timing.read(at: 100, peerAnswer: 3)
        #expect(timing.answerTime(sendingAt: 100.000_007_5) == 7)
        // Far beyond what the field holds (about 71 minutes): none.
        #expect(timing.answerTime(sendingAt: 100 + 5_000) == CrossProcessFrame.noAnswer)
    }

    @Test func theExchangeTurnsAroundInTheLongerOfTheTwoAnswerTimes() {
        var timing = AnswerTiming()
        _ = timing.read(at: 1, peerAnswer: 0)
        _ = timing.answerTime(sendingAt: 1.000_004) // this side answered in 4 µs
        #expect(timing.read(at: 2, peerAnswer: 9) == 9e-6)
        _ = timing.answerTime(sendingAt: 2.000_030) // then in 30 µs
        #expect(timing.read(at: 3, peerAnswer: 2) == 30e-6)
        _ = timing.answerTime(sendingAt: 3.000_001)
        #expect(timing.read(at: 4, peerAnswer: CrossProcessFrame.noAnswer) == .infinity)
    }

    @Test func theAnswerTimeCrossesTheWire() throws {
        var frame = CrossProcessFrame(kind: .reply, msgid: 7, firstID: 1, components: [Data([1, 2])])
        frame.answerMicroseconds = 1234
        let parsed = try frame.encoded().withUnsafeBytes { try CrossProcessFrame.parse($0) }
        #expect(parsed.answerMicroseconds == 1234)
        #expect(parsed == frame)
        let unanswered = try CrossProcessFrame(kind: .credit, firstID: 1).encoded().withUnsafeBytes { try CrossProcessFrame.parse($0) }
        #expect(unanswered.answerMicroseconds == CrossProcessFrame.noAnswer)
    }

    @Test func aLateAnswerReadByTheLoopEarnsItsSpinOnce() throws {
        let thread = try RunLoopThread(name: "answer-earns")
        defer { thread.stop() }
        let credits = try thread.loop.performAndWait { () -> [Double] in
            let loop = thread.loop
            loop.idleSpin = IdleSpin()
            var seen = [loop.idleSpin.credit]
            loop.noteAnswer(after: 4e-6) // no sleep to account for
            seen.append(loop.idleSpin.credit)
            loop.answerWakeUnearned = true // a sleep in a conversation that an fd ended late
            loop.noteAnswer(after: 4e-6)
            seen.append(loop.idleSpin.credit)
            loop.noteAnswer(after: 4e-6) // the same sleep: no second earning
            seen.append(loop.idleSpin.credit)
            loop.answerWakeUnearned = true
            loop.noteAnswer(after: 2 * IdleSpin.limit) // an exchange slower than a spin
            seen.append(loop.idleSpin.credit)
            return seen
        }
        #expect(credits == [0, 0, IdleSpin.parkCost, IdleSpin.parkCost, IdleSpin.parkCost])
    }

    @Test func aPublishersReplyCarriesItsAnswerTime() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "answer-publisher")
        defer { thread.stop() }
        let port = MessagePort(queueLimit: 4)
        port.setHandler { message in message.reply(msgid: message.msgid, before: .distantFuture) }
        thread.loop.add(port, forMode: .common)
        let published = try directory.registry.publish(port, as: "answers", on: thread.loop)
        defer { published.unpublish() }
        let fd = rawConnection(to: directory, name: "answers")
        defer { close(fd) }
        let request = CrossProcessFrame(kind: .message, flags: .request, msgid: 5, firstID: 1).encoded()
        #expect(send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count)
        let reply = try #require(readRawFrame(fd))
        #expect(reply.kind == .reply)
        #expect(reply.firstID == 1)
        // Read, handled and answered within the test's own bound.
        #expect(reply.answerMicroseconds < 10_000_000)
    }
}
