import Foundation
import PortRunLoopKit

/// A mode of the model test: the default mode, two private modes, or `.common`.
///
/// Thread-safety: a value type; `Sendable`.
public enum ModelMode: Int, Sendable, CaseIterable, CustomStringConvertible {
    case `default`, a, b, common

    /// The Foundation mode it stands for.
    ///
    /// Thread-safety: a pure function.
    public var mode: RunLoop.Mode {
        switch self {
        case .default: .default
        case .a: RunLoop.Mode("model.A")
        case .b: RunLoop.Mode("model.B")
        case .common: .common
        }
    }

    /// Thread-safety: a pure function.
    public var description: String {
        switch self {
        case .default: "default"
        case .a: "A"
        case .b: "B"
        case .common: "common"
        }
    }

    /// The modes a loop can run (`.common` is not a mode one runs).
    static let runnable: [ModelMode] = [.default, .a, .b]
}

/// How a model-test run op runs the loop. Every kind polls: nothing in the model waits for time.
///
/// Thread-safety: a value type; `Sendable`.
public enum ModelRunKind: Sendable, Equatable, CustomStringConvertible {
    /// `run(mode:before: .distantPast)`.
    case beforePast
    /// `run(mode:timeout: 0, returnAfterSourceHandled:)`.
    case poll(returnAfterSourceHandled: Bool)

    /// Thread-safety: a pure function.
    public var description: String {
        switch self {
        case .beforePast: "before:past"
        case .poll(let r): r ? "timeout:0,returnAfterSource" : "timeout:0"
        }
    }
}

/// The timers of the model test: due now (one-shot or repeating every 1000 s) or never due.
///
/// Thread-safety: a value type; `Sendable`.
public enum ModelTimerKind: Sendable, CustomStringConvertible {
    case pastOneShot, pastRepeating, future

    /// Thread-safety: a pure function.
    public var description: String {
        switch self {
        case .pastOneShot: "past"
        case .pastRepeating: "past,repeats"
        case .future: "distantFuture"
        }
    }
}

/// One operation of a model-test case, done on the loop's own thread — at top level between runs,
/// or as an action inside a handler (a perform block, a port's next delivery, a timer's block).
///
/// Thread-safety: a value type; `Sendable`.
public indirect enum ModelOp: Sendable, CustomStringConvertible {
    case addPort(port: Int, mode: ModelMode)
    case removePort(port: Int, mode: ModelMode)
    /// A zero-timeout send (`send(before: .distantPast)`).
    case send(port: Int)
    case invalidatePort(port: Int)
    /// The port's next delivery runs these actions inside its handler.
    case onNextDelivery(port: Int, actions: [ModelOp])
    case perform(modes: [ModelMode], actions: [ModelOp])
    case addTimer(kind: ModelTimerKind, mode: ModelMode, actions: [ModelOp])
    case invalidateTimer(index: Int)
    case addCommonMode(ModelMode)
    case run(mode: ModelMode, kind: ModelRunKind)
    /// `loop.stop()` from the loop's thread (a no-op when not running).
    case stop
    /// Watch the model's pipe for reading in a mode (once per case; later ones are ignored).
    case watchPipe(mode: ModelMode)
    /// Write one byte into the pipe (its fd source's handler reads one byte per call).
    case writePipe
    case cancelPipe
    /// Add a new run-loop observer (the next index) in a mode.
    case addObserver(activities: RunLoopActivity, repeats: Bool, order: Int, mode: ModelMode)
    /// Add observer `index` (made by an earlier ``addObserver(activities:repeats:order:mode:)``) in one more mode.
    case observeMode(index: Int, mode: ModelMode)
    case removeObserver(index: Int, mode: ModelMode)
    case invalidateObserver(index: Int)
    /// Add custom source `source` (one of ``ModelGenerator/sourceOrders``' sources) in a mode.
    case addSource(source: Int, mode: ModelMode)
    case removeSource(source: Int, mode: ModelMode)
    case signalSource(source: Int)
    case invalidateSource(source: Int)

    /// The letters of `activities`: E(ntry), T(imers), S(ources), W(aiting), A(fter waiting), X (exit).
    ///
    /// Thread-safety: a pure function.
    public static func letters(_ activities: RunLoopActivity) -> String {
        if activities == .allActivities { return "all" }
        let names: [(RunLoopActivity, String)] = [(.entry, "E"), (.beforeTimers, "T"), (.beforeSources, "S"),
                                                  (.beforeWaiting, "W"), (.afterWaiting, "A"), (.exit, "X")]
        return names.filter { activities.contains($0.0) }.map(\.1).joined()
    }

    /// Thread-safety: a pure function.
    public var description: String {
        func list(_ actions: [ModelOp]) -> String {
            actions.isEmpty ? "" : " { " + actions.map(\.description).joined(separator: "; ") + " }"
        }
        switch self {
        case .addPort(let p, let m): return "add(p\(p), \(m))"
        case .removePort(let p, let m): return "remove(p\(p), \(m))"
        case .send(let p): return "send(p\(p))"
        case .invalidatePort(let p): return "invalidate(p\(p))"
        case .onNextDelivery(let p, let a): return "onNextDelivery(p\(p))\(list(a))"
        case .perform(let modes, let a): return "perform([\(modes.map(\.description).joined(separator: ","))])\(list(a))"
        case .addTimer(let kind, let m, let a): return "addTimer(\(kind), \(m))\(list(a))"
        case .invalidateTimer(let i): return "invalidateTimer(t\(i))"
        case .addCommonMode(let m): return "addCommonMode(\(m))"
        case .run(let m, let k): return "run(\(m), \(k))"
        case .stop: return "stop()"
        case .watchPipe(let m): return "watchPipe(\(m))"
        case .writePipe: return "writePipe()"
        case .cancelPipe: return "cancelPipe()"
        case .addObserver(let a, let r, let o, let m): return "addObserver(\(Self.letters(a)), \(r ? "repeats" : "once"), order \(o), \(m))"
        case .observeMode(let i, let m): return "observeMode(o\(i), \(m))"
        case .removeObserver(let i, let m): return "removeObserver(o\(i), \(m))"
        case .invalidateObserver(let i): return "invalidateObserver(o\(i))"
        case .addSource(let s, let m): return "addSource(s\(s), \(m))"
        case .removeSource(let s, let m): return "removeSource(s\(s), \(m))"
        case .signalSource(let s): return "signal(s\(s))"
        case .invalidateSource(let s): return "invalidateSource(s\(s))"
        }
    }

    /// The number of operations, nested actions included (what shrinking minimises).
    ///
    /// Thread-safety: a pure function.
    public var size: Int {
        switch self {
        case .onNextDelivery(_, let a), .perform(_, let a), .addTimer(_, _, let a): 1 + a.reduce(0) { $0 + $1.size }
        default: 1
        }
    }

    var actions: [ModelOp] {
        switch self {
        case .onNextDelivery(_, let a), .perform(_, let a), .addTimer(_, _, let a): a
        default: []
        }
    }

    func withActions(_ actions: [ModelOp]) -> ModelOp {
        switch self {
        case .onNextDelivery(let p, _): .onNextDelivery(port: p, actions: actions)
        case .perform(let m, _): .perform(modes: m, actions: actions)
        case .addTimer(let k, let m, _): .addTimer(kind: k, mode: m, actions: actions)
        default: self
        }
    }
}

/// Random operation sequences for the model test.
///
/// Thread-safety: pure functions of the seed.
enum ModelGenerator {
    static let portCount = 3
    /// The custom sources' orders (source 0 runs after the others; 1 and 2 tie, so their signal
    /// order decides, V5).
    static let sourceOrders = [1, 0, 0]
    static let observerIndices = 4

    static func generate(seed: UInt64) -> [ModelOp] {
        var rng = SeededGenerator(seed: seed)
        let length = Int.random(in: 8...40, using: &rng)
        var ops: [ModelOp] = []
        // Start with something scheduled most of the time.
        if rng.chance(80) { ops.append(.addPort(port: 0, mode: .default)) }
        if rng.chance(40) { ops.append(observer(&rng)) }
        // Two sources of equal order in the default mode half of the time, so passes often owe
        // several performs (V5).
        if rng.chance(50) { ops += [.addSource(source: 1, mode: .common), .addSource(source: 2, mode: .default)] }
        while ops.count < length { ops.append(topLevel(&rng)) }
        return ops
    }

    static func mode(_ rng: inout SeededGenerator, allowCommon: Bool = true) -> ModelMode {
        let modes: [ModelMode] = allowCommon ? [.default, .default, .a, .b, .common] : ModelMode.runnable
        return modes.randomElement(using: &rng)!
    }

    static func port(_ rng: inout SeededGenerator) -> Int { Int.random(in: 0..<portCount, using: &rng) }

    static func runOp(_ rng: inout SeededGenerator) -> ModelOp {
        let kinds: [ModelRunKind] = [.beforePast, .poll(returnAfterSourceHandled: false), .poll(returnAfterSourceHandled: true)]
        let m: ModelMode = rng.chance(60) ? .default : mode(&rng, allowCommon: false)
        return .run(mode: m, kind: kinds.randomElement(using: &rng)!)
    }

    static func topLevel(_ rng: inout SeededGenerator) -> ModelOp {
        switch Int.random(in: 0..<128, using: &rng) {
        case 0..<10: return .addPort(port: port(&rng), mode: mode(&rng))
        case 10..<14: return .removePort(port: port(&rng), mode: mode(&rng))
        case 14..<34: return .send(port: port(&rng))
        case 34..<37: return .invalidatePort(port: port(&rng))
        case 37..<43: return .onNextDelivery(port: port(&rng), actions: actions(&rng))
        case 43..<56: return .perform(modes: performModes(&rng), actions: rng.chance(40) ? actions(&rng) : [])
        case 56..<62: return .addTimer(kind: timerKind(&rng), mode: mode(&rng), actions: rng.chance(30) ? actions(&rng) : [])
        case 62..<64: return .invalidateTimer(index: Int.random(in: 0..<4, using: &rng))
        case 64..<66: return .addCommonMode(rng.chance(50) ? .a : .b)
        case 66..<88: return runOp(&rng)
        case 88..<90: return .stop
        case 90..<93: return .watchPipe(mode: mode(&rng))
        case 93..<98: return .writePipe
        case 98..<100: return .cancelPipe
        case 100..<106: return observer(&rng)
        case 106..<108: return .observeMode(index: observerIndex(&rng), mode: mode(&rng))
        case 108..<110: return .removeObserver(index: observerIndex(&rng), mode: mode(&rng))
        case 110..<112: return .invalidateObserver(index: observerIndex(&rng))
        case 112..<116: return .addSource(source: source(&rng), mode: mode(&rng))
        case 116..<125: return .signalSource(source: source(&rng))
        case 125..<126: return .removeSource(source: source(&rng), mode: mode(&rng))
        default: return .invalidateSource(source: source(&rng))
        }
    }

    static func source(_ rng: inout SeededGenerator) -> Int { Int.random(in: 0..<sourceOrders.count, using: &rng) }

    static func observerIndex(_ rng: inout SeededGenerator) -> Int { Int.random(in: 0..<observerIndices, using: &rng) }

    /// A new observer: of every activity most of the time, else of a random subset; repeating most
    /// of the time; of order -1...2.
    static func observer(_ rng: inout SeededGenerator) -> ModelOp {
        var activities: RunLoopActivity = .allActivities
        if rng.chance(40) {
            activities = []
            for activity in [RunLoopActivity.entry, .beforeTimers, .beforeSources, .beforeWaiting, .afterWaiting, .exit]
            where rng.chance(50) { activities.insert(activity) }
        }
        return .addObserver(activities: activities, repeats: rng.chance(75), order: Int.random(in: -1...2, using: &rng), mode: mode(&rng))
    }

    static func performModes(_ rng: inout SeededGenerator) -> [ModelMode] {
        if rng.chance(50) { return [.common] }
        var set: [ModelMode] = [mode(&rng)]
        if rng.chance(30) { set.append(mode(&rng)) }
        return set
    }

    static func timerKind(_ rng: inout SeededGenerator) -> ModelTimerKind {
        [ModelTimerKind.pastOneShot, .pastOneShot, .pastRepeating, .future].randomElement(using: &rng)!
    }

    /// Actions done inside a handler: one level deep (nested performs carry no actions of their own).
    /// Observers are not added inside a handler (only taken away): whether a run reports its
    /// passes is decided when each pass begins, and a handler cannot tell which pass it is in.
    static func actions(_ rng: inout SeededGenerator) -> [ModelOp] {
        (0..<Int.random(in: 1...3, using: &rng)).map { _ in
            switch Int.random(in: 0..<116, using: &rng) {
            case 0..<22: return .send(port: port(&rng))
            case 22..<34: return .perform(modes: performModes(&rng), actions: [])
            case 34..<44: return .invalidatePort(port: port(&rng))
            case 44..<56: return .removePort(port: port(&rng), mode: mode(&rng))
            case 56..<64: return .addPort(port: port(&rng), mode: mode(&rng))
            case 64..<72: return .stop
            case 72..<92: return runOp(&rng)
            case 92..<96: return .addTimer(kind: timerKind(&rng), mode: mode(&rng), actions: [])
            case 96..<100: return .writePipe
            case 100..<110: return .signalSource(source: source(&rng))
            case 110..<112: return .invalidateObserver(index: observerIndex(&rng))
            case 112..<114: return .removeObserver(index: observerIndex(&rng), mode: mode(&rng))
            case 114..<115: return .removeSource(source: source(&rng), mode: mode(&rng))
            default: return .invalidateSource(source: source(&rng))
            }
        }
    }
}
