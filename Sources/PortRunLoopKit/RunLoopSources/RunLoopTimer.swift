import Foundation
import Synchronization

/// A timer a ``PortRunLoop`` fires on its thread (the counterpart of `Timer`/`CFRunLoopTimer`).
///
/// A timer fires at its ``fireDate``, never before (corelibs' one-shot `Timer` fires immediately:
/// this one does not). A repeating timer then moves its date on by whole ``interval``s to the first
/// one after its block returned, skipping fires it missed (CFRunLoop's rule). Add it to one loop, in any number of modes; it keeps
/// firing in nested runs of those modes. A one-shot timer is invalidated after it fired.
///
/// Thread-safety: `Sendable`; every member is safe from any thread. The block runs on the loop's thread.
public final class RunLoopTimer: @unchecked Sendable, CustomStringConvertible {
    /// The time between fires of a repeating timer (Foundation clamps ≤ 0 to 0.1 ms; so do we).
    ///
    /// Thread-safety: immutable.
    public let interval: TimeInterval
    /// Whether the timer fires again after each fire.
    ///
    /// Thread-safety: immutable.
    public let repeats: Bool

    private struct State {
        var fireDate: Date
        var tolerance: TimeInterval
        /// Moves each time ``fireDate`` is set, so the loop can tell a block that re-armed its timer.
        var fireDateVersion: UInt64 = 0
        var loop: PortRunLoop?
        /// The modes it was added to in ``loop`` and not removed from since: the first one, and
        /// any others (a timer in one mode, the usual case, allocates nothing for its modes).
        var firstMode: RunLoop.Mode?
        var moreModes: Set<RunLoop.Mode> = []

        mutating func insert(_ mode: RunLoop.Mode) {
            if firstMode == nil { firstMode = mode } else if firstMode != mode { moreModes.insert(mode) }
        }

        mutating func remove(_ mode: RunLoop.Mode) {
            if firstMode == mode { firstMode = moreModes.popFirst() } else { moreModes.remove(mode) }
        }
    }

    private let state: TracedMutex<State>
    let gate = DeliveryGate()
    let block: @Sendable (RunLoopTimer) -> Void
    /// For a library timer whose owner must end with the loop (a published port's accept pause):
    /// called on the loop's thread when the loop's shutdown invalidates the timer. nil for a
    /// user's timer. Set before the timer is added, never after.
    @exclusivity(unchecked) var shutDownHandler: (@Sendable () -> Void)?

    // MARK: Its place in its loop (the loop's thread only)
    //
    // A timer belongs to one loop, and leaves it only for good (invalidated, or the loop shut
    // down), so the loop keeps its bookkeeping here rather than in an object of its own: one
    // allocation fewer per timer, and one reference fewer to follow per heap comparison.
    // `@exclusivity(unchecked)`: only the loop's thread touches these, one access at a time.

    /// Its group (the modes it is in) while it is registered in its loop: set exactly while the
    /// loop's `timers` holds it, so "is it registered?" is this test, not a look-up there.
    @exclusivity(unchecked) var group: SourceGroup?
    /// Its fire date, in seconds since the reference date (the wall clock, as `Date`): the heap's
    /// key. Timers compare dates exactly, so equal dates tie and fire in scheduling order.
    /// `.infinity` for dates so far away they never come (`.distantFuture`).
    @exclusivity(unchecked) var due: Double = .infinity
    /// Its tolerance: how far past `due` the loop may sleep before it fires (see ``TimerHeap/wake``).
    @exclusivity(unchecked) var slack: Double = 0
    /// The loop's schedule counter when it was last scheduled (ties between equal `due`s).
    @exclusivity(unchecked) var sequence: UInt64 = 0
    /// Its index in `group.timers`, or -1 while it is not in the heap (firing, or unregistered).
    @exclusivity(unchecked) var heapIndex = -1
    /// ``fireDateVersion`` when it was last scheduled: a later version means its date was set since
    /// (from its block or another thread), so the fire that follows re-arms it for that date
    /// instead of moving it on or invalidating it.
    @exclusivity(unchecked) var scheduledVersion: UInt64 = 0
    /// True while its block runs (counted in its group's ``SourceGroup/firingTimers``).
    @exclusivity(unchecked) var isFiring = false

    /// A timer that first fires at `date`.
    ///
    /// - Parameters:
    ///   - date: the first fire date; NaN is a programmer error; a past date fires on the loop's
    ///     next turn; `.distantFuture` never fires.
    ///   - interval: seconds between fires when `repeats`; must be finite; ≤ 0 becomes 0.1 ms.
    ///   - repeats: whether the timer fires again every `interval`; a one-shot timer is invalidated
    ///     once it has fired.
    ///   - tolerance: how late the timer may fire (negative becomes 0); see ``tolerance``.
    ///   - block: runs on the loop's thread with the timer.
    ///
    /// Thread-safety: any thread.
    public init(fireAt date: Date, interval: TimeInterval = 0, repeats: Bool = false, tolerance: TimeInterval = 0,
                _ block: @escaping @Sendable (RunLoopTimer) -> Void) {
        Misuse.check(!date.timeIntervalSinceReferenceDate.isNaN, "RunLoopTimer: the fire date is NaN")
        Misuse.check(interval.isFinite, "RunLoopTimer: the interval must be finite, got \(interval)")
        Misuse.check(!tolerance.isNaN, "RunLoopTimer: the tolerance is NaN")
        self.interval = repeats ? max(interval, 0.0001) : max(interval, 0)
        self.repeats = repeats
        self.block = block
        self.state = TracedMutex(State(fireDate: date, tolerance: max(tolerance, 0)))
    }

    /// A timer that first fires `seconds` from now (and every `seconds` when `repeats`).
    ///
    /// Thread-safety: any thread.
    public convenience init(after seconds: TimeInterval, repeats: Bool = false,
                            _ block: @escaping @Sendable (RunLoopTimer) -> Void) {
        Misuse.check(seconds.isFinite, "RunLoopTimer(after:): the interval must be finite, got \(seconds)")
        self.init(fireAt: Date(timeIntervalSinceNow: max(seconds, 0)), interval: seconds, repeats: repeats, block)
    }

    /// The next time the timer fires. Setting it re-arms the timer for the new date
    /// (`Timer.fireDate`, `CFRunLoopTimerSetNextFireDate`): the way to push a connection timeout
    /// back without making a new timer. Set from the timer's own block, it keeps a one-shot timer
    /// valid for one more fire, and replaces a repeating timer's next date. Setting it on an
    /// invalidated timer does nothing. NaN is a programmer error.
    ///
    /// Thread-safety: any thread; from another thread the loop re-arms before its next turn.
    public var fireDate: Date {
        get { state.withLock { $0.fireDate } }
        set {
            Misuse.check(!newValue.timeIntervalSinceReferenceDate.isNaN, "RunLoopTimer.fireDate: the date is NaN")
            let loop = state.withLock { state -> PortRunLoop? in
                state.fireDate = newValue
                state.fireDateVersion &+= 1
                return state.loop
            }
            guard isValid, let loop else { return }
            loop.registerOnOwner { $0.timerFireDateChanged(self) }
        }
    }

    /// How late the timer may fire: it fires no earlier than ``fireDate`` and, load permitting, no
    /// later than `fireDate + tolerance`. The loop orders timers by that latest time, so a timer
    /// with a tolerance does not wake a sleeping loop before it, and fires together with whatever
    /// else wakes the loop in between. A new value applies from the timer's next scheduling.
    ///
    /// Thread-safety: any thread.
    public var tolerance: TimeInterval {
        get { state.withLock { $0.tolerance } }
        set {
            Misuse.check(!newValue.isNaN, "RunLoopTimer.tolerance: NaN")
            state.withLock { $0.tolerance = max(newValue, 0) }
        }
    }

    /// False once invalidated (or, for a one-shot timer, after it fired).
    ///
    /// Thread-safety: any thread.
    public var isValid: Bool { !gate.isClosed }

    /// Stops the timer. Once this returns its block does not start again (a call already running
    /// on the loop's thread may finish). Idempotent.
    ///
    /// Thread-safety: any thread, including from inside its own block.
    public func invalidate() {
        guard gate.close() else { return }
        let loop = state.withLock { state -> PortRunLoop? in
            defer { state.loop = nil }
            return state.loop
        }
        guard let loop else { return }
        if loop.isCurrentThread { loop.unregisterTimer(self) } else { loop.registerOnOwner { $0.unregisterTimer(self) } }
    }

    /// The fire date, tolerance and ``fireDateVersion``, read together.
    var schedule: (fireDate: Date, tolerance: TimeInterval, version: UInt64) {
        state.withLock { ($0.fireDate, $0.tolerance, $0.fireDateVersion) }
    }

    /// Moves each time ``fireDate`` is set.
    var fireDateVersion: UInt64 { state.withLock { $0.fireDateVersion } }

    public var description: String { "RunLoopTimer(fireDate: \(fireDate), interval: \(interval), repeats: \(repeats))" }

    // MARK: Loop side

    func attach(to loop: PortRunLoop, mode: RunLoop.Mode) -> Bool {
        state.withLock { state in
            guard !gate.isClosed else { return false }
            if let current = state.loop {
                Misuse.check(current === loop,
                             "PortRunLoop.add(_:forMode:): this RunLoopTimer is already scheduled in another PortRunLoop ('\(current.name)'); a timer belongs to one loop")
            }
            state.loop = loop
            state.insert(mode)
            return true
        }
    }

    /// Takes `mode` out of the timer's modes in `loop`; false when it was not in it.
    func detach(from loop: PortRunLoop, mode: RunLoop.Mode) -> Bool {
        state.withLock { state in
            guard state.loop === loop, state.firstMode == mode || state.moreModes.contains(mode) else { return false }
            state.remove(mode)
            return true
        }
    }

    /// Its modes in `loop` as the adds and removes made so far leave them: (first, others); the
    /// first is nil when it is in none.
    func modes(in loop: PortRunLoop) -> (first: RunLoop.Mode?, more: Set<RunLoop.Mode>) {
        state.withLock { state in state.loop === loop && !gate.isClosed ? (state.firstMode, state.moreModes) : (nil, []) }
    }

    /// Owner thread of its loop, once the timer's block returned: whether the timer is to be
    /// scheduled again (for ``fireDate`` as it now stands). A date set since the timer was
    /// scheduled (``scheduledVersion``), by its block or by another thread, stands. Otherwise a
    /// repeating timer moves on by whole intervals to its first date after the clock as read
    /// now, after the block (CFRunLoop's rule), and a one-shot timer is done: it is
    /// closed and let go of here, and the caller unregisters it.
    ///
    /// One critical section decides and acts, so a date another thread sets meanwhile is either
    /// seen here (and stands) or set after the move on, whose re-arm then applies it; a setter
    /// that comes after a one-shot is done finds it let go of, as on any invalidated timer.
    func finishFiring() -> Bool {
        let scheduledVersion = self.scheduledVersion // the loop's own field: read before the lock
        return state.withLock { state in
            if state.fireDateVersion != scheduledVersion { return true }
            guard repeats else {
                gate.close()
                state.loop = nil
                return false
            }
            // The clock read after the block returned (CF): a block slower than the interval
            // skips the dates it overran instead of firing again at once.
            let now = Date()
            let missed = ((now.timeIntervalSince(state.fireDate)) / interval).rounded(.down)
            var next = state.fireDate.addingTimeInterval(interval * (max(missed, 0) + 1))
            // A first date so far in the past (or -infinity) that the arithmetic loses the cadence
            // (NaN, or not within one interval after now): restart the cadence from now.
            let ahead = next.timeIntervalSince(now)
            if !(ahead > 0 && ahead <= interval) { next = now.addingTimeInterval(interval) }
            state.fireDate = next
            return true
        }
    }
}
