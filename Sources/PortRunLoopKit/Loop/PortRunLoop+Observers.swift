import Foundation

extension PortRunLoop {
    /// Adds `observer` in `mode` (`CFRunLoopAddObserver`; `.common` stands for the common modes). An
    /// observer belongs to one loop (precondition); an invalidated one is ignored; one added to a
    /// shut-down loop is invalidated.
    ///
    /// Thread-safety: any thread; from another thread it takes effect before the loop's next turn.
    public func add(_ observer: RunLoopObserver, forMode mode: RunLoop.Mode) {
        guard observer.attach(to: self, mode: mode) else { return }
        if !registerOnOwner({ $0.syncObserver(observer) }) { observer.invalidate() }
    }

    /// Removes `observer` from `mode` (`CFRunLoopRemoveObserver`); it stays valid, and in its other
    /// modes. Removed from all its modes, it may be added to another loop.
    ///
    /// Thread-safety: any thread; from another thread it takes effect before the loop's next turn.
    public func remove(_ observer: RunLoopObserver, forMode mode: RunLoop.Mode) {
        guard observer.detach(from: self, mode: mode) else { return }
        registerOnOwner { $0.syncObserver(observer) }
    }

    /// Whether `observer` is added to this loop in `mode`, directly or through `.common`
    /// (`CFRunLoopContainsObserver`). Answers with the adds and removes made so far, from any thread.
    ///
    /// Thread-safety: any thread.
    public func contains(_ observer: RunLoopObserver, inMode mode: RunLoop.Mode) -> Bool {
        let modes = observer.modes(in: self)
        if modes.contains(mode) { return true }
        return mode != .common && modes.contains(.common) && commonModes.contains(mode)
    }

    /// Owner: makes the loop's list agree with the observer's modes as they now stand (added,
    /// removed, invalidated: whichever order the requests arrive in, the last one applied wins).
    func syncObserver(_ observer: RunLoopObserver) {
        let modes = ownerShutDown ? [] : observer.modes(in: self)
        if ownerShutDown { observer.invalidate() }
        let wanted: ModeSet? = modes.isEmpty ? nil : ModeSet(modes)
        guard wanted != observer.registeredModes else { return }
        let wasListed = observer.registeredModes != nil
        observer.registeredModes = wanted
        observerGeneration &+= 1
        // The cached list would keep an observer that left alive (and, through its handler, maybe
        // the loop itself): it is worked out again at the next lookup.
        lastObserverLookup = nil
        if wanted == nil {
            runObservers.removeAll { $0 === observer }
            if observer.membership.setHeld(false) { observer.handler = nil }
        } else if !wasListed {
            _ = observer.membership.setHeld(true)
            observer.sequence = nextObserverSequence
            nextObserverSequence &+= 1
            // Kept sorted by (order, sequence): lower orders first, equal ones as added.
            let index = runObservers.firstIndex { $0.order > observer.order } ?? runObservers.endIndex
            runObservers.insert(observer, at: index)
        }
    }

    /// The observers of `mode`, in calling order; worked out again only when observers or the
    /// common modes changed.
    private func observers(in mode: RunLoop.Mode) -> [RunLoopObserver] {
        if let last = lastObserverLookup, last.mode == mode, last.generation == observerGeneration,
           last.groupsGeneration == sourceGroupsGeneration {
            return last.observers
        }
        let common = ownerCommonModes
        let list = runObservers.filter { $0.registeredModes?.contains(mode, commonModes: common) == true }
        lastObserverLookup = (mode, observerGeneration, sourceGroupsGeneration, list)
        return list
    }

    /// Calls the observers of `mode` that watch `activity`, in order (O3). One whose handler is
    /// running is skipped (O4); one removed or invalidated by an earlier one in this round is not
    /// called. Only called when ``runObservers`` is not empty; counted in
    /// ``LoopMetrics/observerRounds``.
    func notifyObservers(_ activity: RunLoopActivity, mode: RunLoop.Mode) {
        observerRounds.increment()
        let list = observers(in: mode)
        guard !list.isEmpty else { return }
        let ambient = innermostRunHasAmbientContext
        let common = ownerCommonModes
        for observer in list where observer.activities.contains(activity) {
            guard !observer.isFiring, observer.isValid,
                  observer.registeredModes?.contains(mode, commonModes: common) == true else { continue }
            observer.isFiring = true
            // An observer belongs to the loop, not to a caller: it runs with no `ServiceContext`.
            withCallerContext(nil, ambient: ambient) { observer.handler?(observer, activity) }
            observer.isFiring = false
            if !observer.repeats { observer.invalidate() }
        }
    }

    /// At shutdown: invalidates every observer (L4).
    func invalidateObserversAtShutDown() {
        let observers = runObservers
        runObservers.removeAll()
        lastObserverLookup = nil
        observerGeneration &+= 1
        for observer in observers {
            observer.registeredModes = nil
            observer.invalidate()
            if observer.membership.setHeld(false) { observer.handler = nil }
        }
    }
}
