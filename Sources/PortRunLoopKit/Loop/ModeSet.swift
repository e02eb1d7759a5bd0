import Foundation

extension RunLoop.Mode {
    /// The private mode a thread runs while it waits in ``PortRunLoop/performAndWait(timeout:_:)``
    /// (or a notification center's post-and-wait): only synchronous calls addressed to this thread
    /// run in it, which is what keeps two threads waiting on each other from deadlocking.
    package static let synchronousWait = RunLoop.Mode("PortRunLoop.synchronousWait")
}

/// The modes one piece of work or one source belongs to.
///
/// `.common` is its own case so that the default `perform` allocates nothing for its modes.
/// Thread-safety: a value type; `Sendable`.
enum ModeSet: Sendable, Hashable {
    /// The loop's common modes (``PortRunLoop/commonModes``), as `RunLoop.Mode.common` means.
    case common
    /// Every mode, including private ones: internal control work.
    case all
    /// Exactly these (`.common` among them expands to the common modes).
    case some(Set<RunLoop.Mode>)

    init(_ modes: some Sequence<RunLoop.Mode>) {
        let set = Set(modes)
        self = set == [.common] ? .common : .some(set)
    }

    func contains(_ mode: RunLoop.Mode, commonModes: Set<RunLoop.Mode>) -> Bool {
        switch self {
        case .all: true
        case .common: commonModes.contains(mode)
        case .some(let set): set.contains(mode) || (set.contains(.common) && commonModes.contains(mode))
        }
    }

    var isEmpty: Bool {
        if case .some(let set) = self { return set.isEmpty }
        return false
    }

    func inserting(_ mode: RunLoop.Mode) -> ModeSet {
        switch self {
        case .all: return .all
        case .common: return mode == .common ? .common : .some([.common, mode])
        case .some(var set): set.insert(mode); return ModeSet(set)
        }
    }

    func removing(_ mode: RunLoop.Mode) -> ModeSet {
        switch self {
        case .all: return .all
        case .common: return mode == .common ? .some([]) : .common
        case .some(var set): set.remove(mode); return ModeSet(set)
        }
    }
}
