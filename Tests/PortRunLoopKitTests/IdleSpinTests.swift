@testable import PortRunLoopKit
import Testing

/// The idle-spin budget: a sleep earns a park's worth when the thread's work answered someone and
/// the answer came within the limit (a conversation), or, for an independent stream, only when the
/// wake-up found a backlog (a burst): a steady sparse stream never buys a spin, however soon after
/// the thread ran dry its next message comes, while a burst and a request/reply exchange do, its
/// answers coming as rings or, from another process, as an fd's readiness.
@Suite struct IdleSpinTests {
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

    @Test func spinsThatKeepFailingSpendTheCreditAndStop() {
        var spin = funded(parks: 5)
        var spins = 0
        while spin.allowance > 0 {
            spin.spun(for: spin.allowance, found: false, inConversation: false)
            spins += 1
            #expect(spins < 10)
        }
        #expect(spin.credit == 0)
    }
}
