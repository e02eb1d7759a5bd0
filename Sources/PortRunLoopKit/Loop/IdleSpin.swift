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
/// there is credit, for at most ``limit`` and never more than the credit. A spin that ends with work
/// earns ``parkCost`` (the park it saved) and pays for the time it took; a spin that fails pays for
/// its whole length. A park after which work came sooner than ``limit`` earns too, because a spin
/// would have saved it, and how much depends on who the work came from:
///
/// - In a conversation (the thread's last work answered someone who will probably answer back: a
///   Swift task's job, a synchronous call, a message sent to another loop or process, or the
///   thread is itself waiting for an answer) it earns the whole ``parkCost``. The answer comes
///   back after the partner's own wake-up, 10–20 µs on a VM, and only a spin keeps both sides of
///   an exchange off the scheduler: that is latency saved, worth the CPU.
/// - Otherwise (a stream of messages that owes nothing to the thread's output) it earns what a
///   spin would have saved net of its own length, `parkCost − gap`: a stream whose messages come
///   10 µs or more after the thread ran dry earns nothing, so a steady sparse stream never buys a
///   spin, while a burst (gaps of a microsecond) still earns almost all of it.
///
/// So the CPU spent on spins that fail is bounded by the parks that spins saved or would have
/// saved; at steady sparse rates (a message every 50 µs or more) there is no credit and the thread
/// sleeps at once, and a burst starts spinning after its first short gap.
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
    /// counting its own wake-up); `.infinity` when it woke for something else. `inConversation`:
    /// the thread's work before the sleep answered someone (see above).
    mutating func slept(gap: Double, inConversation: Bool) {
        guard gap < Self.limit else { return }
        let earned = inConversation ? Self.parkCost : max(0, Self.parkCost - gap)
        credit = min(Self.maxCredit, credit + earned)
    }
}
