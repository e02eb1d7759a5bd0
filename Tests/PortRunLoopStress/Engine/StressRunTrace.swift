import Foundation
import PortRunLoopKit

/// The activities one observer of every activity saw, checked as they come against CFRunLoop's
/// order (Semantics.md O5/O6): each run is `entry`, then passes — `beforeTimers`, `beforeSources`,
/// and, when the run goes to sleep, `beforeWaiting`, `afterWaiting` — then `exit`; a nested run's
/// `entry` … `exit` comes between its outer run's `beforeSources` (or `afterWaiting`) and what
/// follows, in its own mode.
///
/// An observer added from another thread starts seeing a run somewhere in its middle (the loop
/// registers it while it handles a pass): its first run is of unknown phase, and its first
/// activity is taken as it comes. Removed or invalidated, it stops seeing the rest: the trace just
/// ends.
///
/// Thread-safety: a value type, used under its observer's records lock on the loop's thread.
struct StressRunTrace: Sendable {
    enum Phase: Sendable { case unknown, entered, beforeTimers, beforeSources, beforeWaiting, afterWaiting }

    struct Level: Sendable {
        var phase: Phase
        var mode: RunLoop.Mode?
    }

    /// The runs in progress, outermost first (one of unknown phase until the first activity).
    private(set) var stack: [Level] = [Level(phase: .unknown, mode: nil)]
    /// Activities seen.
    private(set) var count = 0

    /// Whether every run the observer saw begin also ended (its first run counts when it saw
    /// anything at all).
    var isClosed: Bool { count == 0 || stack.isEmpty }

    /// Takes one activity reported in `mode`; returns what is wrong with it, if anything. Allocates
    /// nothing unless something is wrong (it runs in every observer call of a stress round).
    mutating func record(_ activity: RunLoopActivity, mode: RunLoop.Mode?) -> String? {
        count += 1
        if activity == .entry {
            if let top = stack.last, !Self.isHandling(top.phase) {
                let problem = "entry while its run was at \(top.phase) (a nested run starts only while sources are handled)"
                stack.append(Level(phase: .entered, mode: mode))
                return problem
            }
            stack.append(Level(phase: .entered, mode: mode))
            return nil
        }
        guard var top = stack.popLast() else {
            return "\(Self.name(activity)) outside any run (no entry before it)"
        }
        var problem: String?
        if let expected = top.mode, expected != mode {
            problem = "\(Self.name(activity)) in mode \(mode?.rawValue ?? "nil") inside a run of \(expected.rawValue)"
        }
        if top.mode == nil { top.mode = mode }
        let allowed: Bool
        let next: Phase?
        let phase = top.phase
        switch activity {
        case .beforeTimers: allowed = phase == .entered || Self.isHandling(phase); next = .beforeTimers
        case .beforeSources: allowed = phase == .unknown || phase == .beforeTimers; next = .beforeSources
        case .beforeWaiting: allowed = phase == .unknown || phase == .beforeSources; next = .beforeWaiting
        case .afterWaiting: allowed = phase == .unknown || phase == .beforeWaiting; next = .afterWaiting
        case .exit: allowed = phase == .entered || Self.isHandling(phase); next = nil
        default: return "an activity that is not one of the six: \(activity.rawValue)"
        }
        if !allowed {
            problem = problem ?? "\(Self.name(activity)) right after \(top.phase) (CF's order: entry, [beforeTimers, beforeSources, "
                + "[beforeWaiting, afterWaiting]]…, exit)"
        }
        if let next {
            top.phase = next
            stack.append(top)
        }
        return problem
    }

    /// A phase in which the run handles sources (or one not known yet): where a nested run may
    /// begin, and the run may go round again or end.
    private static func isHandling(_ phase: Phase) -> Bool {
        phase == .unknown || phase == .beforeSources || phase == .afterWaiting
    }

    static func name(_ activity: RunLoopActivity) -> String {
        switch activity {
        case .entry: "entry"
        case .beforeTimers: "beforeTimers"
        case .beforeSources: "beforeSources"
        case .beforeWaiting: "beforeWaiting"
        case .afterWaiting: "afterWaiting"
        case .exit: "exit"
        default: "activity \(activity.rawValue)"
        }
    }
}
