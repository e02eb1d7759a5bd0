import Foundation
import Synchronization

/// An input source of your own on a ``PortRunLoop`` (CFRunLoop's version-0 source,
/// `CFRunLoopSourceCreate` with `schedule`/`cancel`/`perform`): the way a library plugs an event kind
/// of its own into a run loop.
///
/// Any thread marks it ready with ``signal()`` (a flag, nothing allocated), then wakes the loop with
/// ``PortRunLoop/wakeUp()``; in its next pass of one of the source's modes the loop clears the flag and
/// calls `perform`, once however many signals came. Signalled sources run in (``order``, time of
/// signal) order. The source keeps its modes from running dry (R2). See <doc:Semantics>, V1–V7.
///
/// Thread-safety: `Sendable`; every member is safe from any thread. The callbacks run on the loop's
/// thread.
public final class RunLoopSource: @unchecked Sendable {
    /// Where the source runs among the signalled sources of a pass: lower first; equal orders in
    /// the order they were signalled (`CFRunLoopSourceGetOrder`).
    ///
    /// Thread-safety: immutable.
    public let order: Int

    // The loops that hold the source call these on their threads; nil once released (invalid and
    // held by no loop, after its last `cancel`: see ``LoopMembership``), so that callouts that
    // capture their loop do not keep that loop alive.
    @exclusivity(unchecked) var scheduleHandler: (@Sendable (PortRunLoop, RunLoop.Mode) -> Void)?
    @exclusivity(unchecked) var cancelHandler: (@Sendable (PortRunLoop, RunLoop.Mode) -> Void)?
    @exclusivity(unchecked) var performHandler: (@Sendable (RunLoopSource) -> Void)?

    /// The loop and modes it stands added to, and its validity.
    let membership = LoopMembership(typeName: "RunLoopSource", noun: "a source")
    /// The monotonic time of the latest signal (its bit pattern: positive doubles order as their
    /// bits do), 0 while the source is not signalled.
    let signalStamp = Atomic<UInt64>(0)

    // MARK: Its place in its loop (the loop's thread only)

    /// The modes the loop has it scheduled in (what `schedule` was called for).
    @exclusivity(unchecked) var scheduledModes: Set<RunLoop.Mode> = []
    /// Its group while the loop holds it.
    @exclusivity(unchecked) var group: SourceGroup?

    /// A source that runs `perform` when signalled.
    ///
    /// - Parameters:
    ///   - order: its place among the signalled sources of a pass (lower first).
    ///   - schedule: called on the loop's thread when it is added to the loop in a mode.
    ///   - cancel: called on the loop's thread when it leaves a mode (removed, invalidated, or the
    ///     loop shut down).
    ///   - perform: called on the loop's thread, once per pass in which it was found signalled.
    ///
    /// Thread-safety: any thread.
    public init(order: Int = 0,
                schedule: (@Sendable (PortRunLoop, RunLoop.Mode) -> Void)? = nil,
                cancel: (@Sendable (PortRunLoop, RunLoop.Mode) -> Void)? = nil,
                perform: @escaping @Sendable (RunLoopSource) -> Void) {
        self.order = order
        self.scheduleHandler = schedule
        self.cancelHandler = cancel
        self.performHandler = perform
    }

    /// Marks the source ready (`CFRunLoopSourceSignal`): its loop performs it in its next pass of
    /// one of its modes. It does not wake a sleeping loop: call ``PortRunLoop/wakeUp()`` after it.
    /// Signals that come before the loop clears the flag are performed once. Nothing is allocated
    /// or locked. An invalidated source ignores it.
    ///
    /// Thread-safety: any thread.
    public func signal() {
        guard membership.isValid else { return }
        signalStamp.store(System.monotonicSeconds().bitPattern, ordering: .releasing)
    }

    /// Whether the source is signalled and not yet performed (`CFRunLoopSourceIsSignalled`).
    ///
    /// Thread-safety: any thread.
    public var isSignalled: Bool { signalStamp.load(ordering: .acquiring) != 0 }

    /// False once invalidated.
    ///
    /// Thread-safety: any thread.
    public var isValid: Bool { membership.isValid }

    /// Clears the signal and removes the source from its loop in every mode, calling `cancel` for
    /// each (`CFRunLoopSourceInvalidate`). Idempotent.
    ///
    /// Thread-safety: any thread, including from its own `perform`; on the loop's thread the
    /// source is gone when this returns, from another thread before the loop's next turn.
    public func invalidate() {
        let (wasValid, loop, releaseCallouts) = membership.invalidate()
        guard wasValid else { return }
        signalStamp.store(0, ordering: .releasing)
        if releaseCallouts { releaseHandlers() }
        loop?.registerOnOwner { $0.syncSource(self) }
    }

    /// Lets go of the callouts (once: invalid, held by no loop), as `CFRunLoopSourceInvalidate`
    /// releases the context after the last `cancel`.
    func releaseHandlers() {
        scheduleHandler = nil
        cancelHandler = nil
        performHandler = nil
    }

    // MARK: Loop side

    func attach(to loop: PortRunLoop, mode: RunLoop.Mode) -> Bool { membership.attach(to: loop, mode: mode) }
    func detach(from loop: PortRunLoop, mode: RunLoop.Mode) -> Bool { membership.detach(from: loop, mode: mode) }
    func modes(in loop: PortRunLoop) -> Set<RunLoop.Mode> { membership.modes(in: loop) }
}
