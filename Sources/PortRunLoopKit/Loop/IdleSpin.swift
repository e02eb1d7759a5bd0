/// Whether a thread that ran out of work (a loop whose inbox ran dry, a thread waiting for a
/// `performAndWait` answer) should spin for more before it sleeps, and for how long: only while
/// spinning pays for itself.
///
/// Sleeping costs a park and a wake-up (5–50 µs on a VM, and a doorbell `write` for the producer
/// that finds the loop parked). During a burst, work arrives microseconds apart, so a short spin
/// saves all of that, and a million-message burst rings the doorbell a handful of times instead of
/// once per message. When work is sparse every spin is CPU burnt for nothing.
///
/// The rule is a budget, kept in seconds of spinning (``credit``): spinning is allowed only while
/// there is credit, for at most ``limit`` and never more than the credit. Credit is what spinning
/// saved, net: a spin that ends with work after `t` seconds earns ``parkCost`` (the park it saved)
/// minus `t`; a spin that fails pays for its whole length. A park after which work came `gap`
/// seconds later earns what a spin would have saved, ``parkCost`` minus `gap`, when that is
/// positive: a spin would have caught the work for less than the park cost.
///
/// Why net and not "a spin would have caught it" (`gap` below ``limit``): on a busy machine the
/// thread wakes late, so it runs out of work late and the gap to the next message of a steady
/// 50 µs stream often falls below ``limit``. Earning a whole ``parkCost`` for each such gap paid
/// for one failed spin per earned gap; a gap just short of ``parkCost`` earns almost nothing. So
/// the CPU spent on spins that fail is bounded by the CPU that spins saved or would have saved; at
/// steady sparse rates there is (almost) no credit and the thread sleeps at once, a burst starts
/// spinning after its first short gap, and a request-reply exchange (a `performAndWait` caller,
/// whose next request follows each answer within a microsecond or two) keeps spinning.
///
/// Thread-safety: a value type, owned by one thread.
struct IdleSpin {
    /// The longest spin: 20 µs, about one park-and-wake on a VM.
    static let limit = 20e-6
    /// What one park and its wake-up are taken to cost: what a saved park earns.
    static let parkCost = 10e-6
    /// The most credit kept: five parks' worth.
    static let maxCredit = 50e-6
    /// How often a loop's spin asks libevent (without blocking) whether an fd or a timer is ready:
    /// an fd that becomes ready during a spin is handled this late at most.
    static let pollInterval = 4e-6

    /// Seconds of spinning allowed.
    private(set) var credit = 0.0

    /// How long to spin now (0: sleep at once).
    var allowance: Double { min(Self.limit, credit) }

    /// Records a spin that lasted `seconds` and found work (`found`) or not.
    mutating func spun(for seconds: Double, found: Bool) {
        credit = min(Self.maxCredit, max(0, credit - seconds + (found ? Self.parkCost : 0)))
    }

    /// Records a sleep after which work came `gap` seconds after the thread ran out of it (not
    /// counting its own wake-up); `.infinity` when it woke for something else.
    mutating func slept(gap: Double) {
        if gap < Self.parkCost { credit = min(Self.maxCredit, credit + Self.parkCost - gap) }
    }
}
