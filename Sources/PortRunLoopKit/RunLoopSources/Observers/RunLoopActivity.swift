/// The points of a run at which a ``RunLoopObserver`` is called (`CFRunLoopActivity`, with the same
/// bit values).
///
/// A run reports ``entry`` once, then on every pass ``beforeTimers`` and ``beforeSources``, and,
/// when it is about to sleep, ``beforeWaiting`` and, once woken, ``afterWaiting``; ``exit`` once at
/// the end. See <doc:Semantics>, rules O1–O8.
///
/// Thread-safety: a value type; `Sendable`.
public struct RunLoopActivity: OptionSet, Sendable, Hashable {
    /// The bits (`CFOptionFlags`).
    ///
    /// Thread-safety: a value.
    public let rawValue: UInt

    /// An activity set from its bits.
    ///
    /// Thread-safety: a value.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// A run begins (`kCFRunLoopEntry`, 1).
    ///
    /// Thread-safety: a value.
    public static let entry = RunLoopActivity(rawValue: 1 << 0)
    /// A pass is about to fire the due timers (`kCFRunLoopBeforeTimers`, 2).
    ///
    /// Thread-safety: a value.
    public static let beforeTimers = RunLoopActivity(rawValue: 1 << 1)
    /// A pass is about to handle its sources (`kCFRunLoopBeforeSources`, 4).
    ///
    /// Thread-safety: a value.
    public static let beforeSources = RunLoopActivity(rawValue: 1 << 2)
    /// The loop is about to sleep (`kCFRunLoopBeforeWaiting`, 32).
    ///
    /// Thread-safety: a value.
    public static let beforeWaiting = RunLoopActivity(rawValue: 1 << 5)
    /// The loop woke up, before it handles what woke it (`kCFRunLoopAfterWaiting`, 64).
    ///
    /// Thread-safety: a value.
    public static let afterWaiting = RunLoopActivity(rawValue: 1 << 6)
    /// A run ends (`kCFRunLoopExit`, 128).
    ///
    /// Thread-safety: a value.
    public static let exit = RunLoopActivity(rawValue: 1 << 7)
    /// Every activity (`kCFRunLoopAllActivities`, 0x0FFFFFFF).
    ///
    /// Thread-safety: a value.
    public static let allActivities = RunLoopActivity(rawValue: 0x0FFF_FFFF)
}
