#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopKit

/// Executes one model-test case on the calling thread's own loop and checks every observation
/// against a small reference model of the documented semantics
/// (Sources/PortRunLoopKit/PortRunLoopKit.docc/Semantics.md):
///
/// - M2/M3: a zero-timeout send succeeds iff the port is valid and fewer than `limit` messages are
///   waiting that the loop has not taken (it takes all of a port's messages at once).
/// - M4/M5/M7: each accepted message is delivered once, in order, only in a run of a mode the port
///   is scheduled in, never after `invalidate()`/`remove` returned; held while unscheduled.
/// - P1/P2: a block runs once, in one of its modes, after every earlier block that could also run.
/// - T1–T5: a due timer fires in a run of its modes; a one-shot fires once; a future one never.
/// - F2/F3: a ready fd source is called in runs of its modes, never after `cancel()`.
/// - O1–O6, V1–V6: run-loop observers and custom sources (``ModelCallouts``).
/// - R2–R6, R8: run results (`.finished` for an empty mode, `.stopped`, `.handledSource`,
///   `.timedOut`), and completeness: a polling run without `returnAfterSourceHandled` handles
///   everything of its mode that was ready when it began (nested runs included).
///
/// Thread-safety: confined to the one thread that owns `loop` (`@unchecked Sendable` only so the
/// handlers, which run on that same thread, can reach it).
final class ModelHarness: @unchecked Sendable {
    struct PortModel {
        var valid = true
        var modes: Set<ModelMode> = []
        var queue: [Int] = []   // accepted, not yet taken by the loop
        var taken: [Int] = []   // taken by the loop for delivery, not yet delivered
        let limit: Int
        var removals = 0        // remove(port, forMode:) calls that took a mode away
        var scheduled: Bool { !modes.isEmpty }
    }

    struct TimerModel {
        var valid = true
        var modes: Set<ModelMode>
        var due: Bool
        let repeats: Bool
    }

    struct PendingPerform {
        let id: Int
        let modes: Set<ModelMode>
    }

    struct Frame {
        let mode: ModelMode
        var handled = false
        /// Something that ends a run returning after a handled source: a message, a block, an fd;
        /// not a timer (R3, CFRunLoop's `sourceHandledThisLoop`).
        var handledSource = false
        var stopCalled = false
        var queuedSomething = false
    }

    let loop: PortRunLoop
    private var ports: [MessagePort] = []
    private var portModels: [PortModel] = []
    private var nextDeliveryActions: [Int: [ModelOp]] = [:]
    private var pending: [PendingPerform] = []
    private var nextID = 0
    private var timers: [RunLoopTimer] = []
    private var timerModels: [TimerModel] = []
    private(set) var commonModes: Set<ModelMode> = [.default]
    private var frames: [Frame] = []
    private(set) var violations: [String] = []
    var trace: [String] = []
    /// Observers and custom sources (ModelCallouts.swift).
    var callouts = ModelCallouts()
    // The pipe and its fd source.
    private var pipeFDs: (read: Int32, write: Int32) = (-1, -1)
    private var pipeSource: FileDescriptorSource?
    private var pipeModes: Set<ModelMode> = []
    private var pipeCancelled = false
    private var pipeBytes = 0
    private var pipeCalls = 0

    init(loop: PortRunLoop, limits: [Int]) {
        self.loop = loop
        for (index, limit) in limits.enumerated() {
            let port = MessagePort(queueLimit: limit)
            port.setHandler { [unowned self] message in self.delivered(port: index, id: Int(message.msgid)) }
            ports.append(port)
            portModels.append(PortModel(limit: limit))
        }
        setUpCallouts()
    }

    /// The pipe is made on first use only: most cases never touch it, and file descriptors opened
    /// and closed by the hundred make fd-number reuse likelier for tests running in parallel.
    private func ensurePipe() {
        guard pipeFDs.read < 0 else { return }
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "ModelHarness: pipe() failed")
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        pipeFDs = (fds[0], fds[1])
    }

    deinit {
        pipeSource?.cancel()
        if pipeFDs.read >= 0 {
            close(pipeFDs.read)
            close(pipeFDs.write)
        }
    }

    // MARK: - Model helpers

    private func expand(_ modes: Set<ModelMode>) -> Set<ModelMode> {
        modes.contains(.common) ? modes.subtracting([.common]).union(commonModes) : modes
    }

    func inMode(_ modes: Set<ModelMode>, _ mode: ModelMode) -> Bool { expand(modes).contains(mode) }

    func violation(_ text: String) {
        violations.append(text)
        trace.append("  !! \(text)")
    }

    var depth: String { String(repeating: "  ", count: frames.count) }

    /// The model's view of R2: nothing scheduled in `mode` and no block queued for it.
    private func modeIsEmpty(_ mode: ModelMode) -> Bool {
        if portModels.contains(where: { $0.valid && inMode($0.modes, mode) }) { return false }
        if timerModels.contains(where: { $0.valid && inMode($0.modes, mode) }) { return false }
        if pipeSource != nil && !pipeCancelled && inMode(pipeModes, mode) { return false }
        if sourceKeepsModeAlive(mode) { return false }
        return !pending.contains { inMode($0.modes, mode) }
    }

    private func noteQueued() {
        for index in frames.indices { frames[index].queuedSomething = true }
    }

    /// A custom source's perform: a handled source of the innermost run (R3).
    func noteHandledSource() {
        frames[frames.count - 1].handled = true
        frames[frames.count - 1].handledSource = true
    }

    func checkMode(_ what: String) -> ModelMode? {
        guard let frame = frames.last else {
            violation("\(what) ran while the loop was not running")
            return nil
        }
        let actual = loop.currentMode
        if actual != frame.mode.mode {
            violation("\(what) ran with currentMode \(actual?.rawValue ?? "nil"), expected \(frame.mode)")
        }
        return frame.mode
    }

    // MARK: - Events (called by the loop, on this thread)

    private func delivered(port p: Int, id: Int) {
        calloutEvent()
        trace.append("\(depth)→ delivered p\(p) #\(id)")
        guard let mode = checkMode("delivery of p\(p) #\(id)") else { return }
        frames[frames.count - 1].handled = true
        frames[frames.count - 1].handledSource = true
        var model = portModels[p]
        if !model.valid { violation("p\(p) #\(id) delivered after invalidate(p\(p)) returned (M7)") }
        if !inMode(model.modes, mode) {
            violation("p\(p) #\(id) delivered in a run of \(mode), where p\(p) is not scheduled (modes \(model.modes.map(\.description).sorted())) (M4/M1)")
        }
        if model.taken.isEmpty && !model.queue.isEmpty {
            // M2: the loop takes all of a port's queued messages at once.
            model.taken = model.queue
            model.queue = []
        }
        if let first = model.taken.first, first == id {
            model.taken.removeFirst()
        } else if let index = model.taken.firstIndex(of: id) {
            violation("p\(p) #\(id) delivered before #\(model.taken[0]), sent earlier (M5 FIFO)")
            model.taken.remove(at: index)
        } else if let index = model.queue.firstIndex(of: id) {
            violation("p\(p) #\(id) delivered out of order (M5)")
            model.queue.remove(at: index)
        } else {
            violation("p\(p) #\(id) delivered although it was not waiting (duplicate, rejected or discarded) (M5)")
        }
        portModels[p] = model
        if let actions = nextDeliveryActions.removeValue(forKey: p) { execute(actions) }
        // When the handler returns and its port is no longer scheduled in the running mode (but
        // still in another), the rest of the batch goes back in front of the queue (M1/M2).
        let after = portModels[p]
        if after.valid && after.scheduled && !inMode(after.modes, mode) && !after.taken.isEmpty {
            portModels[p].queue = after.taken + after.queue
            portModels[p].taken = []
        }
    }

    private func performRan(id: Int, actions: [ModelOp]) {
        calloutEvent()
        trace.append("\(depth)→ perform #\(id) ran")
        guard let mode = checkMode("perform #\(id)") else { return }
        frames[frames.count - 1].handled = true
        frames[frames.count - 1].handledSource = true
        guard let index = pending.firstIndex(where: { $0.id == id }) else {
            violation("perform #\(id) ran although it was not pending (ran twice?) (P1)")
            return
        }
        let item = pending[index]
        if !inMode(item.modes, mode) {
            violation("perform #\(id) for modes \(item.modes.map(\.description).sorted()) ran in \(mode) (P1)")
        }
        if let earlier = pending[..<index].first(where: { inMode($0.modes, mode) }) {
            violation("perform #\(id) ran before #\(earlier.id), queued earlier and also runnable in \(mode) (P2)")
        }
        pending.remove(at: index)
        execute(actions)
    }

    private func timerFired(index: Int, actions: [ModelOp]) {
        calloutEvent()
        trace.append("\(depth)→ timer t\(index) fired")
        guard let mode = checkMode("timer t\(index)") else { return }
        frames[frames.count - 1].handled = true
        var model = timerModels[index]
        if !model.valid { violation("t\(index) fired after it was invalidated (or after its one shot) (T4/T2)") }
        if !model.due { violation("t\(index) fired although it is not due (T1)") }
        if !inMode(model.modes, mode) { violation("t\(index) fired in \(mode), not one of its modes (T3)") }
        model.due = false
        timerModels[index] = model
        execute(actions)
        // T2: a one-shot timer is invalidated after it fired — after its block, as in CF (during
        // the block it is still valid and still keeps its modes non-empty).
        if !model.repeats { timerModels[index].valid = false }
    }

    private func pipeReady() {
        calloutEvent()
        var byte: UInt8 = 0
        let n = read(pipeFDs.read, &byte, 1)
        trace.append("\(depth)→ pipe handler (read \(n))")
        guard let mode = checkMode("fd handler") else { return }
        frames[frames.count - 1].handled = true
        frames[frames.count - 1].handledSource = true
        if pipeCancelled { violation("fd handler called after cancel() returned (F3)") }
        if !inMode(pipeModes, mode) { violation("fd handler called in \(mode), not one of its modes (F2)") }
        pipeCalls += 1
        if n == 1 { pipeBytes -= 1 } else { violation("fd handler called while the pipe was not readable (F2)") }
    }

    // MARK: - Operations

    func execute(_ ops: [ModelOp]) {
        for op in ops { execute(op) }
    }

    func execute(_ op: ModelOp) {
        trace.append("\(depth)\(op)")
        switch op {
        case .addPort(let p, let m):
            loop.add(ports[p], forMode: m.mode)
            if portModels[p].valid { portModels[p].modes.insert(m) }
            noteQueued() // scheduling a port that holds messages queues a port-ready item
        case .removePort(let p, let m):
            loop.remove(ports[p], forMode: m.mode)
            if portModels[p].modes.remove(m) != nil { portModels[p].removals += 1 }
            if !portModels[p].scheduled {
                // M1: unscheduled, its messages stay queued (taken ones go back in front).
                portModels[p].queue = portModels[p].taken + portModels[p].queue
                portModels[p].taken = []
            }
        case .send(let p):
            let id = nextID
            nextID += 1
            let model = portModels[p]
            let expected = model.valid && model.queue.count < model.limit
            let accepted = ports[p].send(before: .distantPast, msgid: UInt32(id))
            if accepted != expected {
                violation("send(p\(p)) #\(id) returned \(accepted), expected \(expected) (valid \(model.valid), waiting \(model.queue.count), limit \(model.limit)) (M2/M3)")
            }
            if accepted {
                portModels[p].queue.append(id)
                noteQueued()
            }
        case .invalidatePort(let p):
            ports[p].invalidate()
            portModels[p].valid = false
            portModels[p].queue = []
            portModels[p].taken = []
            portModels[p].modes = []
            if ports[p].isValid { violation("p\(p).isValid is true after invalidate()") }
        case .onNextDelivery(let p, let actions):
            nextDeliveryActions[p] = actions
        case .perform(let modes, let actions):
            let id = nextID
            nextID += 1
            let accepted = loop.perform(inModes: modes.map(\.mode)) { [unowned self] in
                self.performRan(id: id, actions: actions)
            }
            if !accepted { violation("perform #\(id) returned false on a live loop (P4)") }
            pending.append(PendingPerform(id: id, modes: Set(modes)))
            noteQueued()
        case .addTimer(let kind, let m, let actions):
            let index = timers.count
            let date = kind == .future ? Date.distantFuture : Date(timeIntervalSinceNow: -1)
            let timer = RunLoopTimer(fireAt: date, interval: 1000, repeats: kind == .pastRepeating) { [unowned self] _ in
                self.timerFired(index: index, actions: actions)
            }
            timers.append(timer)
            timerModels.append(TimerModel(modes: [m], due: kind != .future, repeats: kind == .pastRepeating))
            loop.add(timer, forMode: m.mode)
        case .invalidateTimer(let index):
            guard index < timers.count else { return }
            timers[index].invalidate()
            timerModels[index].valid = false
        case .addCommonMode(let m):
            loop.addCommonMode(m.mode)
            commonModes.insert(m)
        case .run(let m, let kind):
            run(mode: m, kind: kind)
        case .stop:
            loop.stop()
            if !frames.isEmpty { frames[frames.count - 1].stopCalled = true }
        case .watchPipe(let m):
            guard pipeSource == nil else { return }
            ensurePipe()
            do {
                pipeSource = try loop.watch(fileDescriptor: pipeFDs.read, for: .read, inModes: [m.mode]) { [unowned self] _ in
                    self.pipeReady()
                }
                pipeModes = [m]
            } catch {
                violation("watch(pipe) threw \(error)")
            }
        case .writePipe:
            ensurePipe()
            var byte: UInt8 = 1
            if write(pipeFDs.write, &byte, 1) == 1 { pipeBytes += 1 }
        case .cancelPipe:
            guard let source = pipeSource, !pipeCancelled else { return }
            source.cancel()
            pipeCancelled = true
        case .addObserver, .observeMode, .removeObserver, .invalidateObserver, .addSource, .removeSource, .signalSource, .invalidateSource:
            executeCallout(op)
        }
    }

    /// What was ready in `mode` when a run began.
    private struct Ready {
        var performs: [Int] = []
        var messages: [(port: Int, id: Int)] = []
        var timers: [Int] = []
        var pipe = false
        var sources: [Int] = []
        var isEmpty: Bool { performs.isEmpty && messages.isEmpty && timers.isEmpty && !pipe && sources.isEmpty }
    }

    private func ready(in mode: ModelMode) -> Ready {
        var r = Ready()
        r.performs = pending.filter { inMode($0.modes, mode) }.map(\.id)
        for (p, model) in portModels.enumerated() where model.valid && inMode(model.modes, mode) {
            r.messages += (model.taken + model.queue).map { (p, $0) }
        }
        r.timers = timerModels.indices.filter { timerModels[$0].valid && timerModels[$0].due && inMode(timerModels[$0].modes, mode) }
        r.pipe = pipeSource != nil && !pipeCancelled && pipeBytes > 0 && inMode(pipeModes, mode)
        r.sources = signalledSources(in: mode)
        return r
    }

    private func run(mode: ModelMode, kind: ModelRunKind) {
        let wasEmpty = modeIsEmpty(mode)
        let readyAtStart = ready(in: mode)
        let removalsAtStart = portModels.map(\.removals)
        let pipeCallsAtStart = pipeCalls
        let returnsAfterSource: Bool = {
            if case .poll(let r) = kind { return r }
            return true
        }()
        frames.append(Frame(mode: mode))
        calloutRunStarting(mode: mode, wasEmpty: wasEmpty, stopAfterFirst: returnsAfterSource)
        let label = "run(\(mode), \(kind)) at depth \(frames.count)"
        var actual: RunLoopRunResult?
        var actualBool: Bool?
        switch kind {
        case .beforePast:
            actualBool = loop.run(mode: mode.mode, before: .distantPast)
        case .poll(let rash):
            actual = loop.run(mode: mode.mode, timeout: 0, returnAfterSourceHandled: rash)
        }
        let frame = frames.removeLast()
        calloutRunEnded(label: label, completes: !frame.stopCalled && !wasEmpty && !returnsAfterSource)
        trace.append("\(depth)  = \(actual.map { "\($0)" } ?? actualBool.map { "\($0)" } ?? "?")")

        // Results (R2, R4, R6).
        switch kind {
        case .beforePast:
            if actualBool != !wasEmpty {
                violation("\(label) returned \(actualBool!), expected \(!wasEmpty) (the mode was \(wasEmpty ? "" : "not ")empty) (R2/R3)")
            }
        case .poll(let rash):
            var expected: RunLoopRunResult
            if wasEmpty { expected = .finished }
            else if frame.stopCalled { expected = .stopped }
            else if rash && frame.handledSource { expected = .handledSource }
            else if modeIsEmpty(mode) { expected = .finished }
            else { expected = .timedOut }
            // Work queued during the run may still sit in the inbox, which makes the loop (soundly)
            // treat the mode as not yet empty.
            let lenient = expected == .finished && !wasEmpty && frame.queuedSomething && actual == .timedOut
            if actual != expected && !lenient {
                violation("\(label) returned \(actual!), expected \(expected) (R2/R4/R6)")
            }
        }
        if wasEmpty && frame.handled {
            violation("\(label): the mode was empty, yet something was handled")
        }

        // Completeness: a polling run handles what was ready when it began.
        guard !frame.stopCalled, !wasEmpty else { return }
        if returnsAfterSource {
            if !readyAtStart.isEmpty && !frame.handled {
                violation("\(label): something was ready (\(describe(readyAtStart))) but nothing was handled (R3)")
            }
            return
        }
        for id in readyAtStart.performs where pending.contains(where: { $0.id == id }) {
            violation("\(label): perform #\(id), queued for this mode before the run, did not run (P1/R4)")
        }
        for (p, id) in readyAtStart.messages {
            let model = portModels[p]
            // Taken out of a mode during the run (and maybe put back): it was not continuously
            // ready in this mode, so this run owes it nothing.
            if model.removals != removalsAtStart[p] { continue }
            if model.valid && inMode(model.modes, mode) && (model.queue.contains(id) || model.taken.contains(id)) {
                violation("\(label): p\(p) #\(id), waiting before the run, was not delivered (M4/R4/R8)")
            }
        }
        for t in readyAtStart.timers where timerModels[t].valid && timerModels[t].due && inMode(timerModels[t].modes, mode) {
            violation("\(label): timer t\(t), due before the run, did not fire (T5/R4)")
        }
        if readyAtStart.pipe && !pipeCancelled && inMode(pipeModes, mode) && pipeCalls == pipeCallsAtStart {
            violation("\(label): the fd source was ready before the run but its handler was not called (F2/R4)")
        }
    }

    private func describe(_ r: Ready) -> String {
        var parts: [String] = []
        if !r.performs.isEmpty { parts.append("performs \(r.performs)") }
        if !r.messages.isEmpty { parts.append("messages \(r.messages.map { "p\($0.port)#\($0.id)" })") }
        if !r.timers.isEmpty { parts.append("timers \(r.timers.map { "t\($0)" })") }
        if r.pipe { parts.append("pipe") }
        if !r.sources.isEmpty { parts.append("sources \(r.sources.map { "s\($0)" })") }
        return parts.joined(separator: ", ")
    }

    // MARK: - Case end

    /// Drains every mode, then schedules every held port, and checks that nothing accepted was
    /// left behind (M4, P1, T5); then tears everything down.
    func finish() {
        frames.removeAll()
        trace.append("-- drain (every mode, then held ports scheduled in default, then every mode again)")
        for round in 0..<2 {
            for _ in 0..<3 {
                for m in ModelMode.runnable { run(mode: m, kind: .poll(returnAfterSourceHandled: false)) }
            }
            // M4: held messages of unscheduled ports are delivered once the port is scheduled.
            if round == 0 {
                for p in portModels.indices where portModels[p].valid && !portModels[p].scheduled {
                    execute(.addPort(port: p, mode: .default))
                }
            }
        }
        for id in pending.map(\.id) { violation("drain: perform #\(id) never ran") }
        for (p, model) in portModels.enumerated() where model.valid && model.scheduled && !(model.queue + model.taken).isEmpty {
            violation("drain: p\(p) still holds \(model.queue + model.taken) although scheduled in \(model.modes.map(\.description).sorted())")
        }
        for (t, model) in timerModels.enumerated() where model.valid && model.due {
            violation("drain: timer t\(t) is due but never fired")
        }
        // Statistics agree with the model: every accepted message delivered or discarded once.
        for (p, port) in ports.enumerated() {
            let s = port.statistics
            if s.delivered + s.discarded + s.queued != s.sent {
                violation("p\(p) statistics do not add up: \(s)")
            }
        }
        finishCallouts()
        for port in ports { port.invalidate() }
        for timer in timers { timer.invalidate() }
        pipeSource?.cancel()
    }
}
