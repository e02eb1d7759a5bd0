/// A snapshot of a ``PortRunLoop``'s counters since the loop was made: how much work it did and,
/// above all, how often producers had to wake it.
///
/// ``wakeSignals`` against ``messagesDelivered`` + ``performsRun`` is the batching ratio: a producer
/// rings the loop's doorbell only when the loop is parked (about to sleep), so a burst of a million
/// messages to a busy loop costs a handful of signals, not a million. The Benchmarks package reports
/// it as "wake signals per 1M messages" and CI guards it.
///
/// The counters are read one by one with relaxed loads: each is exact for the moment it was read,
/// but a snapshot taken while the loop runs may mix moments (take it after a
/// ``PortRunLoop/performAndWait(timeout:_:)`` round trip for a consistent picture).
///
/// Thread-safety: a value type; `Sendable`.
public struct LoopMetrics: Sendable, Equatable, CustomStringConvertible {
    /// Times a producer rang the doorbell (a `write` to the loop's eventfd) to wake the parked loop.
    ///
    /// Thread-safety: a value type.
    public var wakeSignals: Int
    /// Times the loop blocked in libevent waiting for something to happen.
    ///
    /// Thread-safety: a value type.
    public var sleeps: Int
    /// Times the loop spun for work before it slept (up to 20 µs, yielding the CPU: Semantics.md
    /// R10). It spins only on credit that earlier wake-ups earned by finding a backlog, or by
    /// answers that came within a spin's length; at sparse rates this stays at zero.
    ///
    /// Thread-safety: a value type.
    public var idleSpins: Int
    /// Queued work items the loop ran: `perform` blocks, `performAndWait` and `submit` bodies, and
    /// executor jobs (actor and task-executor jobs).
    ///
    /// Thread-safety: a value type.
    public var performsRun: Int
    /// ``MessagePort`` messages handed to a handler or delegate, counted when each port's batch
    /// ends.
    ///
    /// Thread-safety: a value type.
    public var messagesDelivered: Int
    /// Timer fires.
    ///
    /// Thread-safety: a value type.
    public var timersFired: Int
    /// Fd-source handler calls.
    ///
    /// Thread-safety: a value type.
    public var fdEventsHandled: Int
    /// `perform` blocks dropped unrun because the loop shut down.
    ///
    /// Thread-safety: a value type.
    public var workDiscarded: Int
    /// `event_add` calls the loop made: arming fd sources (when they are registered, and when a run
    /// of their modes re-arms one that fired in another mode). Running a mode whose sources are
    /// already armed adds nothing.
    ///
    /// Thread-safety: a value type.
    public var eventAdds: Int
    /// `event_del` calls the loop made (fd sources cancelled or suspended).
    ///
    /// Thread-safety: a value type.
    public var eventDeletes: Int
    /// Times the loop set its wake-up timer (`timerfd_settime`) before a sleep: only when its next
    /// wake-up (the run's deadline or the mode's next timer) came earlier, or came within 10 ms
    /// of the time set; a deadline that only moves later, request after request, sets it about
    /// once per its own length.
    ///
    /// Thread-safety: a value type.
    public var wakeTimerSets: Int
    /// Rounds of observer calls: times a run went through its mode's observers for one activity
    /// (``RunLoopActivity``; Semantics.md O3, O5), whether or not one of them watches it. A loop with
    /// no ``RunLoopObserver`` makes none (O7: it pays only an emptiness test per pass for them); a
    /// polling run with observers makes four (entry, before timers, before sources, exit). CI
    /// guards both (Benchmarks/Thresholds/guards.json).
    ///
    /// Thread-safety: a value type.
    public var observerRounds: Int

    /// Makes a snapshot from explicit values (for tests and for computing differences).
    ///
    /// Thread-safety: a value type.
    public init(wakeSignals: Int = 0, sleeps: Int = 0, performsRun: Int = 0, messagesDelivered: Int = 0,
                timersFired: Int = 0, fdEventsHandled: Int = 0, workDiscarded: Int = 0,
                eventAdds: Int = 0, eventDeletes: Int = 0, wakeTimerSets: Int = 0, idleSpins: Int = 0,
                observerRounds: Int = 0) {
        self.wakeSignals = wakeSignals
        self.sleeps = sleeps
        self.idleSpins = idleSpins
        self.performsRun = performsRun
        self.messagesDelivered = messagesDelivered
        self.timersFired = timersFired
        self.fdEventsHandled = fdEventsHandled
        self.workDiscarded = workDiscarded
        self.eventAdds = eventAdds
        self.eventDeletes = eventDeletes
        self.wakeTimerSets = wakeTimerSets
        self.observerRounds = observerRounds
    }

    /// The counts accumulated between `earlier` and this snapshot (field by field).
    ///
    /// Thread-safety: a value type.
    public func since(_ earlier: LoopMetrics) -> LoopMetrics {
        LoopMetrics(wakeSignals: wakeSignals - earlier.wakeSignals,
                    sleeps: sleeps - earlier.sleeps,
                    performsRun: performsRun - earlier.performsRun,
                    messagesDelivered: messagesDelivered - earlier.messagesDelivered,
                    timersFired: timersFired - earlier.timersFired,
                    fdEventsHandled: fdEventsHandled - earlier.fdEventsHandled,
                    workDiscarded: workDiscarded - earlier.workDiscarded,
                    eventAdds: eventAdds - earlier.eventAdds,
                    eventDeletes: eventDeletes - earlier.eventDeletes,
                    wakeTimerSets: wakeTimerSets - earlier.wakeTimerSets,
                    idleSpins: idleSpins - earlier.idleSpins,
                    observerRounds: observerRounds - earlier.observerRounds)
    }

    /// One line with every counter, for logs.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        "LoopMetrics(wakeSignals: \(wakeSignals), sleeps: \(sleeps), performsRun: \(performsRun), "
            + "messagesDelivered: \(messagesDelivered), timersFired: \(timersFired), "
            + "fdEventsHandled: \(fdEventsHandled), workDiscarded: \(workDiscarded), "
            + "eventAdds: \(eventAdds), eventDeletes: \(eventDeletes), wakeTimerSets: \(wakeTimerSets), "
            + "idleSpins: \(idleSpins), observerRounds: \(observerRounds))"
    }
}

extension PortRunLoop {
    /// The loop's counters right now (see ``LoopMetrics``). Reading costs a few relaxed atomic
    /// loads and never blocks the loop.
    ///
    /// Thread-safety: any thread.
    public var metrics: LoopMetrics {
        LoopMetrics(wakeSignals: wakeSignals.value,
                    sleeps: sleeps.value,
                    performsRun: performsRun.value,
                    messagesDelivered: messagesDelivered.value,
                    timersFired: timersFired.value,
                    fdEventsHandled: fdEventsHandled.value,
                    workDiscarded: workDiscarded.value,
                    eventAdds: base.adds.value,
                    eventDeletes: base.deletes.value,
                    wakeTimerSets: wakeTimerSets.value,
                    idleSpins: idleSpins.value,
                    observerRounds: observerRounds.value)
    }
}
