import Foundation

extension PortRunLoop {
    /// Runs one pass of `mode` without waiting (due timers, ready ports and fds, queued work, at
    /// most one handled source), then returns the date the mode's next timer fires:
    /// `.distantFuture` when it has no timer, nil when the mode is empty (before or after the
    /// pass) (`-[NSRunLoop limitDateForMode:]`, as swift-corelibs-foundation implements it: a
    /// `CFRunLoopRunInMode(mode, 0, true)` followed by `CFRunLoopGetNextTimerFireDate`).
    ///
    /// Thread-safety: the loop's own thread only (precondition; corelibs answers nil on another
    /// thread, where this is a programmer error as every run is: Semantics L2).
    public func limitDate(forMode mode: RunLoop.Mode) -> Date? {
        preconditionOnLoopThread("PortRunLoop.limitDate(forMode:)")
        guard runIfNotEmpty(mode: mode, deadline: -.infinity, returnAfterSourceHandled: true) != nil,
              !modeIsEmpty(mode, groups: sourceGroups(in: mode)) else { return nil }
        return nextTimerFireDate(forMode: mode) ?? .distantFuture
    }

    /// Runs `mode` once until a source was handled or `date` (`-[NSRunLoop acceptInputForMode:beforeDate:]`,
    /// which is ``run(mode:before:)`` without its answer). Returns at once for an empty mode.
    ///
    /// Thread-safety: the loop's own thread only (precondition).
    public func acceptInput(forMode mode: RunLoop.Mode, before date: Date) {
        preconditionOnLoopThread("PortRunLoop.acceptInput(forMode:before:)")
        let deadline = Self.checkedDeadline(date, "PortRunLoop.acceptInput(forMode:before:)")
        _ = runIfNotEmpty(mode: mode, deadline: deadline, returnAfterSourceHandled: true)
    }

    /// The date the earliest timer of `mode` fires, or nil when it has none
    /// (`CFRunLoopGetNextTimerFireDate`, which answers 0 for none). Runs nothing. A timer whose
    /// block is running is not counted until it is rescheduled.
    ///
    /// Thread-safety: the loop's own thread only (precondition): the timers' schedule is the
    /// thread's own state, read without a lock.
    public func nextTimerFireDate(forMode mode: RunLoop.Mode) -> Date? {
        preconditionOnLoopThread("PortRunLoop.nextTimerFireDate(forMode:)")
        var earliest = Double.infinity
        for group in sourceGroups(in: mode) {
            if let first = group.timers.first { earliest = min(earliest, first.due) }
        }
        return earliest == .infinity ? nil : Date(timeIntervalSinceReferenceDate: earliest)
    }

    /// The modes that have a port, timer, fd source, custom source or observer in them, `.common`
    /// expanded into ``commonModes`` (`CFRunLoopCopyAllModes`, which also keeps modes that are
    /// merely known to the loop; private modes of the library are not listed).
    ///
    /// Thread-safety: the loop's own thread only (precondition): registrations are the thread's
    /// own state.
    public var allModes: Set<RunLoop.Mode> {
        preconditionOnLoopThread("PortRunLoop.allModes")
        let common = ownerCommonModes
        var modes = Set<RunLoop.Mode>()
        func insert(_ set: ModeSet) {
            switch set {
            case .all: break
            case .common: modes.formUnion(common)
            case .some(let named):
                for mode in named { if mode == .common { modes.formUnion(common) } else { modes.insert(mode) } }
            }
        }
        for group in sourceGroups.values where !group.isEmpty { insert(group.modes) }
        for observer in runObservers { if let set = observer.registeredModes { insert(set) } }
        modes.remove(.synchronousWait)
        return modes
    }

    /// True while the loop's thread sleeps waiting for something to do (`CFRunLoopIsWaiting`): set
    /// just before it blocks and cleared as soon as it wakes; a loop spinning for work before it
    /// sleeps, or handling sources, is not waiting.
    ///
    /// Thread-safety: any thread; the answer may be out of date as soon as it is read.
    public var isWaiting: Bool { sleeping.load(ordering: .relaxed) }
}
