import Foundation
import PortRunLoopKit

/// The observer and custom-source operations of the model test (see ``ModelCallouts``), done on
/// the loop's thread, where each takes effect when it returns: the model changes with it, the
/// source's `schedule`/`cancel` calls must be exactly the model's (V1), and `contains` must answer
/// as the model does for every mode (O1/V1).
///
/// Thread-safety: part of ``ModelHarness``: the loop's thread only.
extension ModelHarness {
    func executeCallout(_ op: ModelOp) {
        if !callouts.callbacks.isEmpty {
            violation("schedule/cancel called outside an add, remove or invalidate: \(callouts.callbacks)")
            callouts.callbacks = []
        }
        var expected: [String] = []
        switch op {
        case .addObserver(let activities, let repeats, let order, let m):
            let index = callouts.observers.count
            let observer = RunLoopObserver(activities: activities, repeats: repeats, order: order) { [unowned self] _, activity in
                self.observerCalled(index, activity)
            }
            callouts.observers.append(observer)
            callouts.observerModels.append(ModelCallouts.ObserverModel(activities: activities, repeats: repeats, order: order))
            observe(index, m)
        case .observeMode(let index, let m):
            guard index < callouts.observers.count else { return }
            observe(index, m)
        case .removeObserver(let index, let m):
            guard index < callouts.observers.count else { return }
            loop.remove(callouts.observers[index], forMode: m.mode)
            callouts.observerModels[index].modes.remove(m)
            checkContains(observer: index)
        case .invalidateObserver(let index):
            guard index < callouts.observers.count else { return }
            callouts.observers[index].invalidate()
            callouts.observerModels[index].valid = false
            callouts.observerModels[index].modes = []
            checkContains(observer: index)
        case .addSource(let s, let m):
            loop.add(callouts.sources[s], forMode: m.mode)
            if callouts.sourceModels[s].valid && callouts.sourceModels[s].modes.insert(m).inserted { expected = ["+\(m)"] }
            checkContains(source: s)
        case .removeSource(let s, let m):
            loop.remove(callouts.sources[s], forMode: m.mode)
            if callouts.sourceModels[s].modes.remove(m) != nil {
                expected = ["-\(m)"]
                callouts.sourceModels[s].removals += 1
            }
            checkContains(source: s)
        case .signalSource(let s):
            callouts.sources[s].signal()
            if callouts.sourceModels[s].valid {
                callouts.sourceModels[s].signalled = true
                callouts.sourceModels[s].signalSequence = callouts.nextSignal
                callouts.nextSignal += 1
            }
            if callouts.sources[s].isSignalled != callouts.sourceModels[s].valid {
                violation("s\(s).isSignalled is \(callouts.sources[s].isSignalled) right after signal() (valid: \(callouts.sourceModels[s].valid)) (V3)")
            }
        case .invalidateSource(let s):
            callouts.sources[s].invalidate()
            if callouts.sourceModels[s].valid { expected = callouts.sourceModels[s].modes.map { "-\($0)" } }
            callouts.sourceModels[s].valid = false
            callouts.sourceModels[s].signalled = false
            callouts.sourceModels[s].modes = []
            if callouts.sources[s].isSignalled { violation("s\(s) is still signalled after invalidate() (V6)") }
            checkContains(source: s)
        default:
            return
        }
        if callouts.callbacks.sorted() != expected.sorted() {
            violation("\(op): schedule/cancel calls \(callouts.callbacks), expected \(expected.sorted()) (V1)")
        }
        callouts.callbacks = []
    }

    /// Adds observer `index` in `m`; the loop registers it again (a new place among equal orders)
    /// when it had no mode.
    private func observe(_ index: Int, _ m: ModelMode) {
        loop.add(callouts.observers[index], forMode: m.mode)
        if callouts.observerModels[index].valid {
            if callouts.observerModels[index].modes.isEmpty {
                callouts.observerModels[index].sequence = callouts.nextObserverSequence
                callouts.nextObserverSequence += 1
            }
            callouts.observerModels[index].modes.insert(m)
        }
        checkContains(observer: index)
    }

    /// `contains` for `modes` (directly, or through `.common` for a common mode).
    private func modelContains(_ modes: Set<ModelMode>, _ m: ModelMode) -> Bool {
        modes.contains(m) || (m != .common && modes.contains(.common) && commonModes.contains(m))
    }

    private func checkContains(observer index: Int) {
        for m in ModelMode.allCases {
            let actual = loop.contains(callouts.observers[index], inMode: m.mode)
            let expected = modelContains(callouts.observerModels[index].modes, m)
            if actual != expected { violation("contains(o\(index), \(m)) is \(actual), expected \(expected) (O1)") }
        }
    }

    private func checkContains(source s: Int) {
        for m in ModelMode.allCases {
            let actual = loop.contains(callouts.sources[s], inMode: m.mode)
            let expected = modelContains(callouts.sourceModels[s].modes, m)
            if actual != expected { violation("contains(s\(s), \(m)) is \(actual), expected \(expected) (V1)") }
        }
    }

    /// Case end: every source still signalled in a mode the drain ran must have performed; then
    /// every observer and source is invalidated (their callbacks reach the harness, which goes
    /// away before the loop's thread exits).
    func finishCallouts() {
        for (s, model) in callouts.sourceModels.enumerated() where model.valid && model.signalled {
            if ModelMode.runnable.contains(where: { inMode(model.modes, $0) }) {
                violation("drain: s\(s) is signalled in \(model.modes.map(\.description).sorted()) but never performed (V4)")
            }
        }
        for observer in callouts.observers { observer.invalidate() }
        for source in callouts.sources { source.invalidate() }
        callouts.callbacks = []
    }
}
