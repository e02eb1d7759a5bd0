import Foundation
import Synchronization

/// Which loop, and which of its modes, an observer or a custom source stands added to, and whether
/// it is still valid: what `add`, `remove`, `contains` and `invalidate` of either read and change,
/// from any thread. The loop keeps its own view (the modes it calls the object in) on its thread,
/// and brings it in line with this one when it syncs the object.
///
/// Thread-safety: `Sendable`; `valid` is atomic, the loop and the modes are guarded by `state`'s
/// lock.
final class LoopMembership: Sendable {
    private struct State {
        var loop: PortRunLoop?
        /// The modes it was added to, as added (`.common` stands for the loop's common modes).
        var modes: Set<RunLoop.Mode> = []
    }

    private let state = TracedMutex(State())
    private let valid = Atomic<Bool>(true)
    /// The owner's type name and what one is called, for the misuse message.
    private let typeName: String
    private let noun: String

    init(typeName: String, noun: String) {
        self.typeName = typeName
        self.noun = noun
    }

    /// False once invalidated.
    var isValid: Bool { valid.load(ordering: .acquiring) }

    /// Invalidates once: the loop it stood added to (to sync), or nil; `wasValid` false when it was
    /// invalidated already.
    func invalidate() -> (wasValid: Bool, loop: PortRunLoop?) {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return (false, nil) }
        let loop = state.withLock { state -> PortRunLoop? in
            defer { state.loop = nil; state.modes = [] }
            return state.loop
        }
        return (true, loop)
    }

    /// Records `mode` for `loop`: false once invalidated. One loop at a time (a precondition
    /// names the other loop).
    func attach(to loop: PortRunLoop, mode: RunLoop.Mode) -> Bool {
        state.withLock { state in
            guard valid.load(ordering: .acquiring) else { return false }
            if let current = state.loop {
                Misuse.check(current === loop,
                             "PortRunLoop.add(_:forMode:): this \(typeName) is already added to another PortRunLoop ('\(current.name)'); \(noun) belongs to one loop")
            }
            state.loop = loop
            state.modes.insert(mode)
            return true
        }
    }

    /// Forgets `mode` for `loop`: false when it was not added there. Removed from its last mode, it
    /// may be added to another loop.
    func detach(from loop: PortRunLoop, mode: RunLoop.Mode) -> Bool {
        state.withLock { state in
            guard state.loop === loop, state.modes.remove(mode) != nil else { return false }
            if state.modes.isEmpty { state.loop = nil }
            return true
        }
    }

    /// The modes it stands added to in `loop` (empty when none, or invalidated).
    func modes(in loop: PortRunLoop) -> Set<RunLoop.Mode> {
        state.withLock { $0.loop === loop ? $0.modes : [] }
    }
}
