import Foundation
import Synchronization

/// Which loop, and which of its modes, an observer or a custom source stands added to, and whether
/// it is still valid: what `add`, `remove`, `contains` and `invalidate` of either read and change,
/// from any thread. The loop keeps its own view (the modes it calls the object in) on its thread,
/// and brings it in line with this one when it syncs the object.
///
/// It also decides who lets go of the object's callouts (`CFRunLoopObserverInvalidate` and
/// `CFRunLoopSourceInvalidate` release the context): the loops that hold the object read them on
/// their threads without a lock, so they are released once no loop holds it and it is invalid, by
/// whichever comes last of the invalidation and the loop letting go (``invalidate()`` and
/// ``setHeld(_:)`` answer which), exactly once. A handler that captures its loop then no longer
/// keeps that loop alive.
///
/// Thread-safety: `Sendable`; `valid` is atomic, the loop, the modes and the holders are guarded by
/// `state`'s lock.
final class LoopMembership: Sendable {
    private struct State {
        var loop: PortRunLoop?
        /// The modes it was added to, as added (`.common` stands for the loop's common modes).
        var modes: Set<RunLoop.Mode> = []
        /// The loops whose threads hold the object (call it): one, or two while it moves from a
        /// loop that has not yet synced its removal to another.
        var holders = 0
        /// The callouts were released (once invalid and held by no loop).
        var released = false
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
    /// invalidated already; `releaseCallouts` true when no loop holds it, and so the caller lets go
    /// of its callouts (else the last loop to let go of it does).
    func invalidate() -> (wasValid: Bool, loop: PortRunLoop?, releaseCallouts: Bool) {
        guard valid.exchange(false, ordering: .acquiringAndReleasing) else { return (false, nil, false) }
        return state.withLock { state in
            defer { state.loop = nil; state.modes = [] }
            return (true, state.loop, Self.takeRelease(&state))
        }
    }

    /// Loop thread: the loop started (true) or stopped (false) holding the object. Returns true
    /// when it stopped, the object is invalid and no other loop holds it: the caller (that loop's
    /// thread) lets go of its callouts.
    func setHeld(_ held: Bool) -> Bool {
        state.withLock { state in
            state.holders += held ? 1 : -1
            return !held && !valid.load(ordering: .acquiring) && Self.takeRelease(&state)
        }
    }

    /// True once, when the object (invalid) is held by no loop (under the lock).
    private static func takeRelease(_ state: inout State) -> Bool {
        guard state.holders == 0, !state.released else { return false }
        state.released = true
        return true
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
