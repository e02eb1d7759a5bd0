import Foundation
import Synchronization

/// A callout a ``PortRunLoop`` makes at chosen points of its runs (`CFRunLoopObserver`): when a run
/// begins and ends, before it fires timers and handles sources, before it sleeps and after it wakes
/// (``RunLoopActivity``).
///
/// Add it to one loop, in any number of modes (``PortRunLoop/add(_:forMode:)-(RunLoopObserver,_)``);
/// it is called in runs of those modes, in ``order`` among the mode's observers (equal orders in the
/// order they were added), never while it is already running (a nested run started by the handler
/// does not call it again). A non-repeating observer is invalidated after its first call. Observers
/// do not keep a mode alive: a mode with nothing but observers is empty. See <doc:Semantics>, O1–O8.
///
/// Thread-safety: `Sendable`; every member is safe from any thread. The handler runs on the loop's
/// thread.
public final class RunLoopObserver: @unchecked Sendable {
    /// The activities the observer is called for.
    ///
    /// Thread-safety: immutable.
    public let activities: RunLoopActivity
    /// Whether the observer is called again after its first call (false: it is invalidated then).
    ///
    /// Thread-safety: immutable.
    public let repeats: Bool
    /// Where the observer is called among the mode's observers for one activity: lower first;
    /// equal orders in the order the observers were added (`CFRunLoopObserverGetOrder`).
    ///
    /// Thread-safety: immutable.
    public let order: Int

    /// The loops that hold the observer call it on their threads; nil once released (invalid and
    /// held by no loop: see ``LoopMembership``), so that a handler that captures its loop does not
    /// keep that loop alive.
    @exclusivity(unchecked) var handler: (@Sendable (RunLoopObserver, RunLoopActivity) -> Void)?

    /// The loop and modes it stands added to, and its validity.
    let membership = LoopMembership(typeName: "RunLoopObserver", noun: "an observer")

    // MARK: Its place in its loop (the loop's thread only; see RunLoopTimer for the pattern)

    /// The modes the loop calls it in, nil while the loop does not hold it.
    @exclusivity(unchecked) var registeredModes: ModeSet?
    /// The loop's counter when it was first registered: ties between equal orders.
    @exclusivity(unchecked) var sequence: UInt64 = 0
    /// True while its handler runs (it is not called again meanwhile).
    @exclusivity(unchecked) var isFiring = false

    /// An observer of `activities`.
    ///
    /// - Parameters:
    ///   - activities: the points of a run it is called at.
    ///   - repeats: false to have it invalidated after its first call.
    ///   - order: its place among the mode's observers (lower first).
    ///   - handler: runs on the loop's thread with the observer and the activity.
    ///
    /// Thread-safety: any thread.
    public init(activities: RunLoopActivity, repeats: Bool = true, order: Int = 0,
                _ handler: @escaping @Sendable (RunLoopObserver, RunLoopActivity) -> Void) {
        self.activities = activities
        self.repeats = repeats
        self.order = order
        self.handler = handler
    }

    /// False once invalidated (or, when it does not repeat, once it was called).
    ///
    /// Thread-safety: any thread.
    public var isValid: Bool { membership.isValid }

    /// Removes the observer from its loop, in every mode (`CFRunLoopObserverInvalidate`). Once this
    /// returns on the loop's thread the handler is not called again; from another thread, not after
    /// the call the loop may be making at that moment. The handler is then released (as CF
    /// releases the context), as soon as no loop's thread can be calling it. Idempotent.
    ///
    /// Thread-safety: any thread, including from inside its own handler.
    public func invalidate() {
        let (wasValid, loop, releaseCallouts) = membership.invalidate()
        guard wasValid else { return }
        if releaseCallouts { handler = nil }
        loop?.registerOnOwner { $0.syncObserver(self) }
    }

    // MARK: Loop side

    func attach(to loop: PortRunLoop, mode: RunLoop.Mode) -> Bool { membership.attach(to: loop, mode: mode) }
    func detach(from loop: PortRunLoop, mode: RunLoop.Mode) -> Bool { membership.detach(from: loop, mode: mode) }
    func modes(in loop: PortRunLoop) -> Set<RunLoop.Mode> { membership.modes(in: loop) }
}
