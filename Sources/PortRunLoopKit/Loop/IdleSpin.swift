/// Whether a loop whose inbox just ran dry should spin for more work before it parks, and for how
/// long: only while a burst is in progress.
///
/// Parking costs the loop a sleep and a wake-up (5–50 µs on a VM), and costs the producer that finds
/// it parked a doorbell `write`. A producer that is streaming refills the inbox within microseconds,
/// so during a burst a short spin saves both, and a million-message burst rings the doorbell a
/// handful of times instead of once per message. But when messages are sparse every spin is wasted
/// CPU, and it delays nothing else only because the spin also polls libevent (``pollInterval``).
///
/// The rule: spin (up to ``limit``) only when the last idle gap — from the inbox running dry to the
/// next work arriving — was shorter than ``limit``; that is, only when the last time the loop went
/// idle a spin this long would have saved a park. A burst's messages arrive microseconds apart, so
/// spinning continues through it; its end costs one spin that fails; at 50 µs, 200 µs or 1 ms
/// between messages the loop never spins. The gap after a park is measured to when the producer
/// rang (``Inbox/rangAt``), not to when the loop woke, so the wake-up latency does not count.
///
/// Thread-safety: a value type, owned by the loop's thread.
struct IdleSpin {
    /// The longest spin: 20 µs, about one park-and-wake on a VM.
    static let limit = 20e-6
    /// How often a spin asks libevent (without blocking) whether an fd or a timer is ready: an fd
    /// that becomes ready during a spin is handled this late at most.
    static let pollInterval = 4e-6

    /// The last idle gap, in seconds (`.infinity`: none measured, or the loop woke for something
    /// else than work in its inbox).
    private(set) var lastGap: Double = .infinity

    /// Whether to spin now.
    var shouldSpin: Bool { lastGap < Self.limit }

    /// Records an idle gap.
    mutating func record(gap: Double) { lastGap = gap }
}
