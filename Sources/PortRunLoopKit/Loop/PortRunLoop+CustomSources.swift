import Foundation

extension PortRunLoop {
    /// Adds `source` in `mode` (`CFRunLoopAddSource` of a version-0 source; `.common` stands for the
    /// common modes); its `schedule` callback runs on the loop's thread. A source belongs to one
    /// loop (precondition); an invalidated one is ignored; one added to a shut-down loop is
    /// invalidated.
    ///
    /// Thread-safety: any thread; from another thread it takes effect before the loop's next turn.
    public func add(_ source: RunLoopSource, forMode mode: RunLoop.Mode) {
        guard source.attach(to: self, mode: mode) else { return }
        if !registerOnOwner({ $0.syncSource(source) }) { source.invalidate() }
    }

    /// Removes `source` from `mode` (`CFRunLoopRemoveSource`); its `cancel` callback runs on the
    /// loop's thread. It stays valid, and in its other modes.
    ///
    /// Thread-safety: any thread; from another thread it takes effect before the loop's next turn.
    public func remove(_ source: RunLoopSource, forMode mode: RunLoop.Mode) {
        guard source.detach(from: self, mode: mode) else { return }
        registerOnOwner { $0.syncSource(source) }
    }

    /// Whether `source` is added to this loop in `mode`, directly or through `.common`
    /// (`CFRunLoopContainsSource`), with the adds and removes made so far.
    ///
    /// Thread-safety: any thread.
    public func contains(_ source: RunLoopSource, inMode mode: RunLoop.Mode) -> Bool {
        let modes = source.modes(in: self)
        if modes.contains(mode) { return true }
        return mode != .common && modes.contains(.common) && commonModes.contains(mode)
    }

    /// Owner: makes the loop agree with the source's modes as they now stand, calling `cancel` for
    /// each mode it leaves and `schedule` for each it joins (in that order).
    func syncSource(_ source: RunLoopSource) {
        if ownerShutDown { source.invalidate() }
        let wanted = ownerShutDown ? [] : source.modes(in: self)
        let had = source.scheduledModes
        guard wanted != had else { return }
        if let old = source.group {
            old.customSources.removeAll { $0 === source }
            source.group = nil
        }
        if wanted.isEmpty {
            customSources.removeValue(forKey: ObjectIdentifier(source))
        } else {
            customSources[ObjectIdentifier(source)] = source
            let group = sourceGroup(for: ModeSet(wanted))
            group.customSources.append(source)
            source.group = group
        }
        source.scheduledModes = wanted
        if had.isEmpty { _ = source.membership.setHeld(true) }
        for mode in had.subtracting(wanted) { source.cancelHandler?(self, mode) }
        for mode in wanted.subtracting(had) { source.scheduleHandler?(self, mode) }
        // Its last `cancel` ran: an invalid source no loop holds lets go of its callouts.
        if wanted.isEmpty, source.membership.setHeld(false) { source.releaseHandlers() }
    }

    /// Performs the running mode's signalled sources in (order, signal time) order, each once,
    /// clearing its flag first (a signal from inside `perform` runs it next pass). With
    /// `stopAfterFirst` (a run that returns after a handled source) only the first is performed.
    /// Only called when the loop has custom sources.
    func performSignalledSources(stopAfterFirst: Bool) -> Bool {
        var first: (source: RunLoopSource, stamp: UInt64)?
        var more: [(source: RunLoopSource, stamp: UInt64)] = []
        for group in activeGroups where !group.customSources.isEmpty {
            for source in group.customSources {
                let stamp = source.signalStamp.load(ordering: .acquiring)
                guard stamp != 0 else { continue }
                if first == nil { first = (source, stamp) } else { more.append((source, stamp)) }
            }
        }
        guard let first else { return false }
        if more.isEmpty { return perform(first.source) }
        more.append(first)
        more.sort { $0.source.order != $1.source.order ? $0.source.order < $1.source.order : $0.stamp < $1.stamp }
        var handled = false
        for entry in more where perform(entry.source) {
            handled = true
            if stopAfterFirst { break }
        }
        return handled
    }

    /// Performs `source` if it is still in the running mode and signalled, clearing the flag first.
    private func perform(_ source: RunLoopSource) -> Bool {
        guard source.group?.isInRunningMode == true,
              source.signalStamp.exchange(0, ordering: .acquiringAndReleasing) != 0 else { return false }
        // A source belongs to the loop, not to a caller: it runs with no `ServiceContext`.
        withCallerContext(nil, ambient: innermostRunHasAmbientContext) { source.performHandler?(source) }
        sourcesPerformed.increment()
        return true
    }

    /// Whether a source of the running mode is signalled (the loop then does not sleep).
    func hasSignalledSource() -> Bool {
        for group in activeGroups {
            for source in group.customSources where source.signalStamp.load(ordering: .relaxed) != 0 { return true }
        }
        return false
    }

    /// At shutdown: invalidates every custom source, which cancels it in each of its modes (L4).
    func invalidateCustomSourcesAtShutDown() {
        for source in Array(customSources.values) {
            source.invalidate()
            syncSource(source) // invalidated earlier from another thread, its sync was discarded
        }
    }
}
