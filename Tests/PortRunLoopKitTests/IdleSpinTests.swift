@testable import PortRunLoopKit
import Testing

/// The idle-spin budget: what a short idle gap earns depends on whether the thread's work answered
/// someone (a conversation: the whole park's worth) or not (an independent stream: only what a spin
/// would have saved, net of its length), so a steady sparse stream never buys a spin while a burst
/// and a request/reply exchange do.
@Suite struct IdleSpinTests {
    @Test func aFreshBudgetDoesNotSpin() {
        #expect(IdleSpin().allowance == 0)
    }

    @Test func aStreamWhoseMessagesComeTenMicrosecondsAfterTheThreadRanDryNeverEarnsASpin() {
        var spin = IdleSpin()
        for gap in stride(from: IdleSpin.parkCost, to: IdleSpin.limit, by: 1e-6) {
            spin.slept(gap: gap, inConversation: false)
            #expect(spin.allowance == 0, "gap \(gap)")
        }
    }

    @Test func aConversationEarnsTheWholeParkForAnAnswerThatComesWithinTheLimit() {
        var spin = IdleSpin()
        spin.slept(gap: 15e-6, inConversation: true)
        #expect(spin.credit == IdleSpin.parkCost)
        #expect(spin.allowance == IdleSpin.parkCost)
    }

    @Test func aBurstEarnsWhatASpinWouldHaveSavedNetOfItsLength() {
        var spin = IdleSpin()
        spin.slept(gap: 1e-6, inConversation: false)
        #expect(abs(spin.credit - (IdleSpin.parkCost - 1e-6)) < 1e-12)
    }

    @Test func noGapAtOrPastTheLimitEarnsAnything() {
        var spin = IdleSpin()
        spin.slept(gap: IdleSpin.limit, inConversation: true)
        spin.slept(gap: .infinity, inConversation: true)
        spin.slept(gap: IdleSpin.limit, inConversation: false)
        #expect(spin.credit == 0)
    }

    @Test func theCreditIsCappedAndASpinIsNeverLongerThanTheLimit() {
        var spin = IdleSpin()
        for _ in 0..<100 { spin.slept(gap: 0, inConversation: true) }
        #expect(spin.credit == IdleSpin.maxCredit)
        #expect(spin.allowance == IdleSpin.limit)
    }

    @Test func aFailedSpinPaysItsWholeLengthAndASuccessfulOneEarnsTheParkItSaved() {
        var spin = IdleSpin()
        for _ in 0..<3 { spin.slept(gap: 0, inConversation: true) }
        let before = spin.credit
        spin.spun(for: 20e-6, found: false)
        #expect(abs(spin.credit - (before - 20e-6)) < 1e-12)
        spin.spun(for: 4e-6, found: true)
        #expect(abs(spin.credit - (before - 20e-6 - 4e-6 + IdleSpin.parkCost)) < 1e-12)
    }

    @Test func spinsThatKeepFailingSpendTheCreditAndStop() {
        var spin = IdleSpin()
        for _ in 0..<5 { spin.slept(gap: 0, inConversation: true) }
        var spins = 0
        while spin.allowance > 0 {
            spin.spun(for: spin.allowance, found: false)
            spins += 1
            #expect(spins < 10)
        }
        #expect(spin.credit == 0)
    }
}
