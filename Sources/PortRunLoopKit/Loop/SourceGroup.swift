import Foundation

/// Every source of a loop that is scheduled in exactly the same set of modes (usually there is one
/// group, `.common`): how many ports and fd sources it holds, and its timers in a heap.
///
/// Grouping by mode set is what makes a turn's cost independent of the number of sources: a run
/// works out once, when it starts, which groups belong to its mode (``PortRunLoop/RunFrame``), and
/// marks them ``isInRunningMode``. From then on "is this source in the running mode?" is one load
/// (an fd's readiness, a port's batch), "is the mode empty?" is a few counters, and "which timer is
/// next?" is the top of a few heaps. Groups change only when a source is added in a new set of modes
/// or the common modes change (``PortRunLoop/sourceGroupsGeneration``).
///
/// Thread-safety: the loop's thread only. Its `var`s are `@exclusivity(unchecked)`, as the loop's
/// own are (``PortRunLoop``): every port batch, fd event and timer reads one, and each access is
/// one expression that runs no handler.
final class SourceGroup {
    let modes: ModeSet
    @exclusivity(unchecked) var ports = 0
    @exclusivity(unchecked) var fileDescriptors = 0
    @exclusivity(unchecked) var timers = TimerHeap()
    /// Timers whose block is running: out of the heap meanwhile, but still sources of their modes
    /// (a nested run started by the block does not find the mode empty).
    @exclusivity(unchecked) var firingTimers = 0
    /// Its ``RunLoopSource``s, in the order they were added.
    @exclusivity(unchecked) var customSources: [RunLoopSource] = []
    /// True while the innermost run's mode is one of ``modes``.
    @exclusivity(unchecked) var isInRunningMode = false

    init(modes: ModeSet) { self.modes = modes }

    var isEmpty: Bool { ports == 0 && fileDescriptors == 0 && timers.isEmpty && firingTimers == 0 && customSources.isEmpty }
}

extension PortRunLoop {
    /// The group for `modes`, made on first use (which changes the groups a mode has).
    func sourceGroup(for modes: ModeSet) -> SourceGroup {
        if let group = sourceGroups[modes] { return group }
        let group = SourceGroup(modes: modes)
        sourceGroups[modes] = group
        sourceGroupsChanged()
        return group
    }

    /// The group for sources scheduled in `mode` alone: ``sourceGroup(for:)`` without building a
    /// `Set` for the mode (two allocations) when the same mode is used again, as a server that
    /// makes a timer per request does.
    func sourceGroup(forMode mode: RunLoop.Mode) -> SourceGroup {
        if let last = lastSingleModeGroup, last.generation == sourceGroupsGeneration, last.mode == mode {
            return last.group
        }
        let group = sourceGroup(for: mode == .common ? .common : ModeSet([mode]))
        lastSingleModeGroup = (mode, sourceGroupsGeneration, group)
        return group
    }

    /// The groups whose sources belong to a run of `mode`. The last answer is kept until the
    /// groups change, so the usual pattern (one mode run again and again) pays one string
    /// comparison for it.
    func sourceGroups(in mode: RunLoop.Mode) -> [SourceGroup] {
        if let last = lastGroupLookup, last.generation == sourceGroupsGeneration, last.mode == mode {
            return last.groups
        }
        let common = ownerCommonModes
        let groups = sourceGroups.values.filter { $0.modes.contains(mode, commonModes: common) }
        lastGroupLookup = (mode, sourceGroupsGeneration, groups)
        return groups
    }

    /// A group was made or the common modes changed: the innermost run re-works out its groups now,
    /// outer runs when they become innermost again.
    func sourceGroupsChanged() {
        sourceGroupsGeneration &+= 1
        activateInnermostFrame()
    }

    /// Makes the innermost run's groups the ones marked ``SourceGroup/isInRunningMode`` (worked out
    /// again only when the mode or the groups changed), then re-arms the fd sources that were
    /// suspended because they fired in another mode and belong to this one.
    ///
    /// With no run in progress the marks stay as the last run left them: nothing reads them outside
    /// a run (libevent callbacks and deliveries only happen inside one), and a loop that runs the
    /// same mode again and again then changes no mark at all.
    func activateInnermostFrame() {
        guard let mode = frames.last?.mode else { return }
        if activeGeneration != sourceGroupsGeneration || activeMode != mode {
            for group in activeGroups { group.isInRunningMode = false }
            activeGroups = sourceGroups(in: mode)
            for group in activeGroups { group.isInRunningMode = true }
            activeMode = mode
            activeGeneration = sourceGroupsGeneration
        }
        resumeSuspendedFileDescriptors()
    }

    /// True when the innermost run's mode has no port, timer, fd or custom source and no work is queued for
    /// it (work just arrived in the inbox counts: it may be the control work that adds a source).
    func innermostModeIsEmpty() -> Bool {
        modeIsEmpty(frames[frames.count - 1].mode, groups: activeGroups)
    }

    /// True when `groups` (a mode's) hold no source and no work is queued for `mode`; for a run
    /// about to start.
    func modeIsEmpty(_ mode: RunLoop.Mode, groups: [SourceGroup]) -> Bool {
        for group in groups where !group.isEmpty { return false }
        return !hasQueuedWork(for: mode)
    }

    private func hasQueuedWork(for mode: RunLoop.Mode) -> Bool {
        if !localWork.isEmpty {
            // Work that may run in this mode now: an executor job queued while a job is on this
            // thread's stack cannot (jobs never nest), so it does not keep a nested run going.
            let filter = workFilter(for: mode, jobsMayStart: !RunningExecutorJob.isRunningAny)
            if localWork.contains(where: { filter.admits($0, in: mode) }) { return true }
        }
        // Work is only ever added with the hint raised (see `collectInbox`).
        guard workHint.pointee.load(ordering: .acquiring) else { return false }
        return inbox.withLock { !$0.work.isEmpty }
    }
}
