import Testing
@testable import PortRunLoopKit

/// The idle spin's budget: credit is what spinning saved or would have saved, net of the time it
/// takes, so a steady sparse stream earns no spin however late the thread runs dry, while a burst
/// and a request-reply exchange earn their spins.
@Suite struct IdleSpinTests {
    @Test func aFreshSpinSleepsAtOnce() {
        #expect(IdleSpin().allowance == 0)
    }

    @Test func gapsAtOrAboveTheParkCostEarnNothing() {
        var spin = IdleSpin()
        // A steady stream whose next message comes 10–19 µs after the thread runs dry (a late
        // wake-up on a busy machine): a spin would have caught each one, for more than a park.
        for gap in stride(from: IdleSpin.parkCost, to: IdleSpin.limit, by: 1e-6) {
            spin.slept(gap: gap)
        }
        spin.slept(gap: .infinity)
        #expect(spin.allowance == 0)
    }

    @Test func aShortGapEarnsWhatASpinWouldHaveSaved() {
        var spin = IdleSpin()
        spin.slept(gap: 9e-6)
        #expect(abs(spin.credit - (IdleSpin.parkCost - 9e-6)) < 1e-12)
        #expect(spin.allowance == spin.credit)       // 1 µs: a spin no longer than what it would save
        spin.slept(gap: 1e-6)
        #expect(abs(spin.credit - (1e-6 + IdleSpin.parkCost - 1e-6)) < 1e-12)
    }

    @Test func aFailedSpinPaysItsLengthAndSpinsThatFindWorkKeepABurstSpinning() {
        var spin = IdleSpin()
        spin.slept(gap: 0)                            // a burst's first short gap
        #expect(spin.allowance == IdleSpin.parkCost)
        for _ in 0..<10 { spin.spun(for: 1e-6, found: true) }
        #expect(spin.credit == IdleSpin.maxCredit)     // capped
        #expect(spin.allowance == IdleSpin.limit)
        spin.spun(for: IdleSpin.limit, found: false)   // the producer was preempted
        #expect(abs(spin.credit - (IdleSpin.maxCredit - IdleSpin.limit)) < 1e-12)
        spin.spun(for: IdleSpin.limit, found: false)
        spin.spun(for: IdleSpin.limit, found: false)
        #expect(spin.allowance == 0)                   // never below zero, and no more spinning
    }
}
