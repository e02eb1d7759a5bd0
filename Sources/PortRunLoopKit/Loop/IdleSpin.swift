/// Whether a thread that ran out of work (a loop whose inbox ran dry, a thread waiting for a
/// `performAndWait` answer) should spin for more before it sleeps, and for how long: only while
/// spinning pays for itself.
///
/// Sleeping costs a park and a wake-up (a context switch where the CPU is shared, tens of
/// microseconds where an idle vCPU must be woken: Docs/Benchmarks.md, `RoundTrip` pinned and
/// `FirstSendAfterIdle`; and a doorbell `write` for the producer that finds the loop parked).
/// During a burst, work arrives microseconds apart, so a short spin saves all of that, and a
/// million-message burst rings the doorbell a handful of times instead of once per message. When
/// work is sparse every spin is CPU burnt for nothing.
///
/// The rule is a budget, kept in seconds of spinning (``credit``): spinning is allowed only while
/// there is credit, for at most ``limit`` and never more than the credit. A spin pays for the time
/// it took; one that ends with work earns ``parkCost`` (the park it saved) on the same terms as a
/// park after which work came: whether either earns depends on who the work came from:
///
/// - In a conversation (the thread's last work answered someone who will probably answer back: a
///   Swift task's job, a synchronous call, a message sent to another loop or process, or the thread
///   is itself waiting for an answer) it earns the wake-up it spared (``conversationEarning``: as
///   measured, at least ``parkCost``). The answer comes back after the partner's own wake-up
///   (Docs/Benchmarks.md, `FirstSendAfterIdle`), and only a spin keeps both sides of an exchange off
///   the scheduler: that is latency saved, worth the CPU. The answer is a ring from another thread,
///   or, from another process, an fd's readiness.
/// - Otherwise (a stream of messages that owes nothing to the thread's output) it earns only when
///   the wake-up found a backlog: more than one message handled before the thread ran dry again,
///   i.e. work arriving faster than the thread wakes. A steady sparse stream finds one message per
///   wake-up and never buys a spin, however soon after the thread ran dry its next message comes
///   (where waking an idle vCPU takes most of the gap, a stream every 50 µs arrives a few
///   microseconds after; by gap alone that looks like a burst), while a burst finds a queue.
///
/// So the CPU spent on spins that fail is bounded by the parks that spins saved or would have
/// saved; at steady sparse rates (a message every 50 µs or more) there is no credit and the thread
/// sleeps at once, and a burst starts spinning once a wake-up finds a queue.
///
/// Thread-safety: a value type, owned by one thread.
struct IdleSpin {
    /// The longest spin: 20 µs, about one park and wake-up of an idle vCPU (Docs/Benchmarks.md,
    /// `FirstSendAfterIdle`).
    static let limit = 20e-6
    /// What one park and its wake-up are taken to cost: what a saved park earns.
    static let parkCost = 10e-6
    /// The most credit kept: five parks' worth.
    static let maxCredit = 50e-6
    /// How often a loop's spin looks for a ready fd: it asks libevent (without blocking), or, in a
    /// conversation, reads the conversation's socket (``spinReadsPerPoll``). An fd that becomes
    /// ready during a spin is seen this late at most; in a conversation, an fd other than its
    /// socket up to ``spinReadsPerPoll`` looks later.
    static let pollInterval = 4e-6
    /// In a conversation a spin reads the conversation's socket at those times instead
    /// (``PortRunLoop/readConversationSocket()``), at most this many times in a row: the next look
    /// asks libevent, so the loop's other fds are never starved by a conversation.
    static let spinReadsPerPoll = 8

    /// Seconds of spinning allowed.
    private(set) var credit = 0.0
    /// How long this thread's wake-ups from a park take, from the producer's ring to the thread
    /// running again: an average of the recent ones (``wokeUp(after:)``), 0 until one is measured.
    private(set) var wakeLatency = 0.0

    /// What a park saved in a conversation earns: the wake-up it spared the exchange, as this
    /// thread's wake-ups have measured it, at least ``parkCost`` and at most ``limit``. On a host
    /// whose idle CPUs wake slowly a partner that answers in 12 µs is worth a 12 µs spin; with a
    /// fixed 10 µs earning each such spin would lose credit until the spin fell short of the
    /// answer and the thread paid the spin and the wake-up both.
    var conversationEarning: Double { min(Self.limit, max(Self.parkCost, wakeLatency)) }

    /// Records a wake-up from a park that took `seconds` from the producer's ring.
    mutating func wokeUp(after seconds: Double) {
        guard seconds >= 0, seconds < 1e-3 else { return } // a descheduled thread, not a wake-up
        wakeLatency = wakeLatency == 0 ? seconds : wakeLatency * 0.75 + seconds * 0.25
    }

    /// How long to spin now (0: sleep at once).
    var allowance: Double { min(Self.limit, credit) }

    /// Records a spin that lasted `seconds` and found work (`found`) or not. In a conversation a
    /// spin that found work earns the park it saved at once; otherwise whether it saved one depends
    /// on the backlog it found, which the caller reports afterwards as a wait with no gap
    /// (``slept(gap:inConversation:backlog:)``).
    mutating func spun(for seconds: Double, found: Bool, inConversation: Bool) {
        let earned = found && inConversation ? conversationEarning : 0
        credit = min(Self.maxCredit, max(0, credit - seconds + earned))
    }

    /// Records a sleep after which work came `gap` seconds after the thread ran out of it (not
    /// counting its own wake-up where the work's time is known, a ring's; an fd's readiness, the
    /// answer of another process read from a socket, is measured to the wake-up); `.infinity`
    /// when it woke for something else. `inConversation`: the thread's work before the sleep
    /// answered someone; `backlog`: the wake-up found more than one message to handle (see
    /// above). Returns whether it earned (a loop then spends its conversation mark: each answer
    /// buys at most one park's worth).
    @discardableResult
    mutating func slept(gap: Double, inConversation: Bool, backlog: Bool) -> Bool {
        guard inConversation ? gap < Self.limit : backlog else { return false }
        credit = min(Self.maxCredit, credit + (inConversation ? conversationEarning : Self.parkCost))
        return true
    }
}
