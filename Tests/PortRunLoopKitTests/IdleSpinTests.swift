@testable import PortRunLoopKit
import Testing

/// The idle-spin budget: a sleep earns a park's worth when the thread's work answered someone and
/// the answer came within the limit (a conversation), or, for an independent stream, only when the
/// wake-up found a backlog (a burst): a steady sparse stream never buys a spin, however soon after
/// the thread ran dry its next message comes, while a burst and a request/reply exchange do, its
/// answers coming as rings or, from another process, as an fd's readiness.
@Suite(.timeLimit(.minutes(1))) struct IdleSpinTests {
    /// A budget that has earned `parks` parks' worth in a conversation.
    private func funded(parks: Int) -> IdleSpin {
        var spin = IdleSpin()
        for _ in 0..<parks { spin.slept(gap: 0, inConversation: true, backlog: false) }
        return spin
    }

    @Test func aFreshBudgetDoesNotSpin() {
        #expect(IdleSpin().allowance == 0)
    }

    @Test func aStreamThatFindsOneMessagePerWakeUpNeverEarnsASpinHoweverShortTheGap() {
        var spin = IdleSpin()
        for gap in stride(from: 0, to: IdleSpin.limit, by: 1e-6) {
            spin.slept(gap: gap, inConversation: false, backlog: false)
            #expect(spin.allowance == 0, "gap \(gap)")
        }
    }

    @Test func aConversationEarnsTheWholeParkForAnAnswerThatComesWithinTheLimit() {
        var spin = IdleSpin()
        spin.slept(gap: 15e-6, inConversation: true, backlog: false)
        #expect(spin.credit == IdleSpin.parkCost)
        #expect(spin.allowance == IdleSpin.parkCost)
    }

    /// An fd's readiness, another process's answer, is told as a conversation's sleep measured to
    /// the wake-up; what the sleep earned is returned, so the loop spends its mark only then.
    @Test func aSleepTellsWhetherItEarnedSoAnAnswerWithinTheLimitEarnsTheWholeParkAndALaterOneNothing() {
        var spin = IdleSpin()
        let soon = spin.slept(gap: 12e-6, inConversation: true, backlog: false)
        #expect(soon)
        #expect(spin.credit == IdleSpin.parkCost)
        let atTheLimit = spin.slept(gap: IdleSpin.limit, inConversation: true, backlog: false)
        let later = spin.slept(gap: 1e-3, inConversation: true, backlog: false)
        #expect(!atTheLimit && !later)
        #expect(spin.credit == IdleSpin.parkCost)
    }

    @Test func aBurstEarnsTheWholeParkWhateverTheGap() {
        var spin = IdleSpin()
        spin.slept(gap: 1e-3, inConversation: false, backlog: true)
        #expect(spin.credit == IdleSpin.parkCost)
    }

    @Test func noAnswerAtOrPastTheLimitEarnsAnything() {
        var spin = IdleSpin()
        spin.slept(gap: IdleSpin.limit, inConversation: true, backlog: false)
        spin.slept(gap: .infinity, inConversation: true, backlog: false)
        #expect(spin.credit == 0)
    }

    @Test func theCreditIsCappedAndASpinIsNeverLongerThanTheLimit() {
        let spin = funded(parks: 100)
        #expect(spin.credit == IdleSpin.maxCredit)
        #expect(spin.allowance == IdleSpin.limit)
    }

    @Test func aFailedSpinPaysItsWholeLengthAndASuccessfulOneInAConversationEarnsTheParkItSaved() {
        var spin = funded(parks: 3)
        let before = spin.credit
        spin.spun(for: 20e-6, found: false, inConversation: true)
        #expect(abs(spin.credit - (before - 20e-6)) < 1e-12)
        spin.spun(for: 4e-6, found: true, inConversation: true)
        #expect(abs(spin.credit - (before - 20e-6 - 4e-6 + IdleSpin.parkCost)) < 1e-12)
    }

    @Test func outsideAConversationASuccessfulSpinOnlyPaysUntilItsBacklogIsKnown() {
        var spin = funded(parks: 3)
        let before = spin.credit
        spin.spun(for: 3e-6, found: true, inConversation: false)
        #expect(abs(spin.credit - (before - 3e-6)) < 1e-12)
        // One message found: a sparse stream; the spin bought nothing.
        spin.slept(gap: 0, inConversation: false, backlog: false)
        #expect(abs(spin.credit - (before - 3e-6)) < 1e-12)
        // A queue found: a burst; it saved a park.
        spin.spun(for: 1e-6, found: true, inConversation: false)
        spin.slept(gap: 0, inConversation: false, backlog: true)
        #expect(abs(spin.credit - (before - 4e-6 + IdleSpin.parkCost)) < 1e-12)
    }

    @Test func aConversationEarnsTheWakeUpItsThreadMeasuredAtLeastAParkAndAtMostTheLimit() {
        var spin = IdleSpin()
        spin.wokeUp(after: 15e-6)
        spin.slept(gap: 5e-6, inConversation: true, backlog: false)
        #expect(abs(spin.credit - 15e-6) < 1e-12)
        spin.spun(for: 2e-6, found: true, inConversation: true)
        #expect(abs(spin.credit - (15e-6 - 2e-6 + 15e-6)) < 1e-12)

        var quick = IdleSpin()
        quick.wokeUp(after: 3e-6)
        quick.slept(gap: 5e-6, inConversation: true, backlog: false)
        #expect(quick.credit == IdleSpin.parkCost)

        var slow = IdleSpin()
        slow.wokeUp(after: 80e-6)
        slow.slept(gap: 5e-6, inConversation: true, backlog: false)
        #expect(slow.credit == IdleSpin.limit)
    }

    @Test func theMeasuredWakeUpFollowsRecentWakeUpsAndIgnoresADescheduledThread() {
        var spin = IdleSpin()
        spin.wokeUp(after: 16e-6)
        #expect(spin.wakeLatency == 16e-6)
        spin.wokeUp(after: 8e-6)
        #expect(abs(spin.wakeLatency - 14e-6) < 1e-12)
        spin.wokeUp(after: 5e-3) // not a wake-up: the thread was descheduled
        spin.wokeUp(after: -1e-6) // clocks read on two CPUs
        #expect(abs(spin.wakeLatency - 14e-6) < 1e-12)
    }

    @Test func aStreamsBurstEarnsOneParkWhateverTheMeasuredWakeUp() {
        var spin = IdleSpin()
        spin.wokeUp(after: 18e-6)
        spin.slept(gap: 1e-3, inConversation: false, backlog: true)
        #expect(spin.credit == IdleSpin.parkCost)
    }

    /// An exchange whose partner answers 12 µs after this side parks, on a host whose wake-ups
    /// take 16 µs: each spin that catches the answer saves a wake-up worth more than it cost, so
    /// the spin goes on for as long as the exchange does. Earning a fixed park instead, each such
    /// spin would lose 2 µs of credit until the spin fell short of the answer; from then on the
    /// thread would spin, fail, and pay the wake-up as well, answer after answer.
    @Test func anExchangeAnsweringLaterThanAParkButSoonerThanAWakeUpKeepsSpinning() {
        func caughtAnswers(wakeUp: Double) -> Int {
            var spin = IdleSpin()
            let answer = 12e-6
            var caught = 0
            for _ in 0..<200 {
                if spin.allowance >= answer {
                    spin.spun(for: answer, found: true, inConversation: true)
                    caught += 1
                } else {
                    spin.spun(for: spin.allowance, found: false, inConversation: true)
                    spin.wokeUp(after: wakeUp) // a ring ends the park
                    spin.slept(gap: answer, inConversation: true, backlog: false)
                }
            }
            return caught
        }
        #expect(caughtAnswers(wakeUp: 16e-6) >= 198)
        #expect(caughtAnswers(wakeUp: 8e-6) < 10) // a fast host: a park costs less than the spin
    }

    @Test func spinsThatKeepFailingSpendTheCreditAndStop() throws {
        var spin = funded(parks: 5)
        var spins = 0
        while spin.allowance > 0 {
            spin.spun(for: spin.allowance, found: false, inConversation: false)
            spins += 1
            try #require(spins < 10, "the allowance should run out within a few failed spins")
        }
        #expect(spin.credit == 0)
    }
}
