/// The labels and dimension keys under which ``LoopTurnReporter`` and ``LoopMetricsSampler`` report
/// (`snake_case`, so they pass unchanged to Prometheus-style backends).
///
/// Every metric carries the dimension ``loopKey`` (the loop's `PortRunLoop.name`,
/// or the name given at init), then any extra dimensions the caller passed.
///
/// Thread-safety: a namespace of constants; `Sendable` (it has no instances).
public enum LoopMetricNames {
    /// Dimension key of every metric: the loop's name.
    ///
    /// Thread-safety: immutable.
    public static let loopKey = "loop"
    /// Dimension key of ``turnItems``: `blocks`, `jobs`, `messages`, `timers` or `fds`.
    ///
    /// Thread-safety: immutable.
    public static let kindKey = "kind"

    /// Timer: how long each turn was busy (`endTime - startTime`).
    ///
    /// Thread-safety: immutable.
    public static let turnBusy = "portrunloop_turn_busy"
    /// Timer: how long the loop waited before each turn (zero when it did not wait).
    ///
    /// Thread-safety: immutable.
    public static let turnSleep = "portrunloop_turn_sleep"
    /// Counter: turns reported.
    ///
    /// Thread-safety: immutable.
    public static let turns = "portrunloop_turns"
    /// Counter: items the turns handled, one counter per ``kindKey``.
    ///
    /// Thread-safety: immutable.
    public static let turnItems = "portrunloop_turn_items"

    /// Timer: how long a block queued on the loop by ``LoopMetricsSampler/sample()`` waited until
    /// the loop ran it: the loop's delivery latency, probed once per sample.
    ///
    /// Thread-safety: immutable.
    public static let deliveryLatency = "portrunloop_delivery_latency"
    /// Counter: doorbell rings that woke the parked loop (`LoopMetrics.wakeSignals`).
    ///
    /// Thread-safety: immutable.
    public static let wakeSignals = "portrunloop_wake_signals"
    /// Counter: times the loop blocked waiting (`LoopMetrics.sleeps`).
    ///
    /// Thread-safety: immutable.
    public static let sleeps = "portrunloop_sleeps"
    /// Counter: `perform` blocks dropped at shutdown (`LoopMetrics.workDiscarded`).
    ///
    /// Thread-safety: immutable.
    public static let workDiscarded = "portrunloop_work_discarded"
    /// Counter: libevent `event_add` calls (`LoopMetrics.eventAdds`).
    ///
    /// Thread-safety: immutable.
    public static let eventAdds = "portrunloop_event_adds"
    /// Counter: libevent `event_del` calls (`LoopMetrics.eventDeletes`).
    ///
    /// Thread-safety: immutable.
    public static let eventDeletes = "portrunloop_event_deletes"
    /// Counter: `timerfd_settime` calls setting the loop's wake-up timer
    /// (`LoopMetrics.wakeTimerSets`).
    ///
    /// Thread-safety: immutable.
    public static let wakeTimerSets = "portrunloop_wake_timer_sets"
    /// Counter: times the loop spun for work before it slept (`LoopMetrics.idleSpins`).
    ///
    /// Thread-safety: immutable.
    public static let idleSpins = "portrunloop_idle_spins"
    /// Counter: rounds of run-loop observer calls (`LoopMetrics.observerRounds`; none without
    /// observers).
    ///
    /// Thread-safety: immutable.
    public static let observerRounds = "portrunloop_observer_rounds"

    /// Gauge: entries waiting in the loop's notification queue when sampled.
    ///
    /// Thread-safety: immutable.
    public static let queueDepth = "portrunloop_notification_queue_depth"
    /// Gauge: the largest depth the notification queue has reached.
    ///
    /// Thread-safety: immutable.
    public static let queueHighWaterMark = "portrunloop_notification_queue_high_water_mark"
    /// Counter: notification queue entries accepted.
    ///
    /// Thread-safety: immutable.
    public static let queueEnqueued = "portrunloop_notification_queue_enqueued"
    /// Counter: notification queue entries delivered (or, for pending posts, posted).
    ///
    /// Thread-safety: immutable.
    public static let queueDelivered = "portrunloop_notification_queue_delivered"
    /// Counter: notification queue entries coalesced away.
    ///
    /// Thread-safety: immutable.
    public static let queueCoalesced = "portrunloop_notification_queue_coalesced"
    /// Counter: notification queue entries discarded for any other reason.
    ///
    /// Thread-safety: immutable.
    public static let queueDiscarded = "portrunloop_notification_queue_discarded"
}
