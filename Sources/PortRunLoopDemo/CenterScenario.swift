import Foundation
import PortRunLoopKit
import Synchronization

// Apple's scenario run through `ThreadNotificationCenter`:
//  1. the article's redirection literally: a notification posted on Foundation's default center from a
//     background thread, bridged, and handled on the observer's own thread;
//  2. the center under load: observers on two named RunLoopThreads, posts from background threads,
//     with evidence (counts, handling thread per batch, order per poster, queue metrics);
//  3. the teardown race: observers dropped while another thread posts.

/// What went wrong when the scenario's evidence does not hold.
struct CenterScenarioFailure: Error, CustomStringConvertible {
    let description: String
}

/// Runs Apple's scenario through ``ThreadNotificationCenter`` and prints the evidence; throws
/// ``CenterScenarioFailure`` if a check fails.
func runCenterScenario(posterThreads: Int, itemsPerThread: Int) throws {
    precondition(posterThreads >= 1 && itemsPerThread >= 1, "runCenterScenario: need at least one poster and one item")
    let center = ThreadNotificationCenter()
    let observerA = try RunLoopThread(name: "observer-A")
    let observerB = try RunLoopThread(name: "observer-B")
    defer {
        observerA.stop()
        observerB.stop()
    }
    print("[center] Apple's redirection through ThreadNotificationCenter: observers on 'observer-A' and 'observer-B', \(posterThreads) poster thread(s) x \(itemsPerThread) notifications")
    try articleRedirect(center: center, observer: observerA)
    try loadScenario(center: center, observers: [observerA, observerB],
                     posterThreads: posterThreads, itemsPerThread: itemsPerThread)
    try teardownRace(center: center, observer: observerB, iterations: 1_000)
}

private extension Notification.Name {
    static let scenarioTest = Notification.Name("TestNotification")
    static let scenarioItem = Notification.Name("CenterScenario.item")
    static let scenarioFlush = Notification.Name("CenterScenario.flush")
}

/// The article's "register normally, capture on the posting thread, redirect", in one call.
private func articleRedirect(center: ThreadNotificationCenter, observer: RunLoopThread) throws {
    let handled = DispatchSemaphore(value: 0)
    let token = center.addObserver(forName: .scenarioTest, postedOn: .default, on: observer.loop) { _ in
        print("[center]   process notification: current thread = \(Thread.current.name ?? "?")")
        handled.signal()
    }
    defer { token.remove() }
    let poster = Thread {
        Thread.current.name = "background"
        print("[center]   posting 'TestNotification' on NotificationCenter.default from \(Thread.current.name ?? "?")")
        NotificationCenter.default.post(name: .scenarioTest, object: nil, userInfo: nil)
    }
    poster.start()
    guard handled.wait(timeout: .now() + 10) == .success else {
        throw CenterScenarioFailure(description: "the bridged notification never reached observer-A")
    }
}

/// What one observer saw. Written only on its observer thread; read after a flush through that
/// thread's `performAndWait`, which orders the reads after the writes.
private final class ObserverTally: @unchecked Sendable {
    let posters: Int
    let batchSize: Int
    var handled = 0
    var nextSeq: [Int]
    var outOfOrder = 0
    var threadNames: [String: Int] = [:]
    /// Per poster: the thread that handled the first notification of each batch.
    var batchThreads: [[String]]

    init(posters: Int, batchSize: Int) {
        self.posters = posters
        self.batchSize = batchSize
        nextSeq = Array(repeating: 0, count: posters)
        batchThreads = Array(repeating: [], count: posters)
    }

    func record(_ note: Notification) {
        let name = Thread.current.name ?? "?"
        let poster = note.userInfo?["poster"] as? Int ?? -1
        let seq = note.userInfo?["seq"] as? Int ?? -1
        handled += 1
        threadNames[name, default: 0] += 1
        guard poster >= 0 && poster < posters else { outOfOrder += 1; return }
        if seq != nextSeq[poster] { outOfOrder += 1 }
        nextSeq[poster] = seq + 1
        if seq % batchSize == 0 { batchThreads[poster].append(name) }
    }
}

private func loadScenario(center: ThreadNotificationCenter, observers: [RunLoopThread],
                          posterThreads: Int, itemsPerThread: Int) throws {
    let batchSize = max(1, itemsPerThread / 4)
    let tallies = observers.map { _ in ObserverTally(posters: posterThreads, batchSize: batchSize) }
    var tokens: [NotificationObservation] = []
    for (thread, tally) in zip(observers, tallies) {
        tokens.append(center.addObserver(forName: .scenarioItem, on: thread.loop) { note in tally.record(note) })
        tokens.append(center.addObserver(forName: .scenarioFlush, on: thread.loop) { _ in })
    }
    defer { tokens.forEach { $0.remove() } }
    let wakesBefore = observers.map { $0.loop.metrics.wakeSignals }
    let started = Date()
    let done = DispatchSemaphore(value: 0)
    for p in 0..<posterThreads {
        let poster = Thread {
            Thread.current.name = "poster-\(p)"
            for seq in 0..<itemsPerThread {
                center.post(name: .scenarioItem, object: nil, userInfo: ["poster": p, "seq": seq])
            }
            done.signal()
        }
        poster.start()
    }
    for _ in 0..<posterThreads {
        guard done.wait(timeout: .now() + 120) == .success else {
            throw CenterScenarioFailure(description: "a poster thread did not finish within 120 s")
        }
    }
    // Each observer thread's queue is first in, first out: once this synchronous post is handled on
    // both threads, everything posted before it has been handled too.
    let flushHandlers = try center.postAndWait(name: .scenarioFlush, timeout: .seconds(120))
    let elapsed = Date().timeIntervalSince(started)
    let posted = posterThreads * itemsPerThread
    print("[center] posted \(posted) notifications from \(posterThreads) background thread(s) in \(String(format: "%.3f", elapsed)) s; flush postAndWait reached \(flushHandlers) observer(s)")
    var failures: [String] = []
    for (index, (thread, tally)) in zip(observers, tallies).enumerated() {
        let snapshot = try thread.loop.performAndWait { () -> (Int, Int, [String: Int], [[String]]) in
            (tally.handled, tally.outOfOrder, tally.threadNames, tally.batchThreads)
        }
        let (handled, outOfOrder, names, batches) = snapshot
        let metrics = center.queue(for: thread.loop).metrics
        let wakes = thread.loop.metrics.wakeSignals - wakesBefore[index]
        let nameList = names.sorted { $0.key < $1.key }.map { "\($0.key) x\($0.value)" }.joined(separator: ", ")
        print("[center] \(thread.name): handled \(handled)/\(posted), on thread(s): \(nameList); in order per poster: \(outOfOrder == 0 ? "yes" : "NO (\(outOfOrder) out of order)")")
        for (poster, threads) in batches.enumerated() {
            let summary = threads.enumerated().map { "batch \($0.offset): \($0.element)" }.joined(separator: ", ")
            print("[center]   poster-\(poster) (\(batchSize) per batch) -> \(summary)")
        }
        print("[center]   queue: \(metrics); loop wake signals: \(wakes) for \(handled) notifications")
        if handled != posted { failures.append("\(thread.name) handled \(handled) of \(posted)") }
        if outOfOrder != 0 { failures.append("\(thread.name) saw \(outOfOrder) notifications out of order") }
        if names.keys.contains(where: { $0 != thread.name }) { failures.append("\(thread.name)'s observer ran on another thread") }
    }
    if !failures.isEmpty { throw CenterScenarioFailure(description: failures.joined(separator: "; ")) }
}

/// The teardown race: observers dropped on this thread while another thread posts continuously. Once the
/// token is removed and a running handler waited for, the observer must never be called again.
private func teardownRace(center: ThreadNotificationCenter, observer: RunLoopThread, iterations: Int) throws {
    final class Flags: Sendable {
        let removed = Atomic<Bool>(false)
        let late = Atomic<Int>(0)
        let calls = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let firstCall = DispatchSemaphore(value: 0)
        let called = Atomic<Bool>(false)
    }
    let shared = Flags()
    let posterDone = DispatchSemaphore(value: 0)
    let poster = Thread {
        Thread.current.name = "teardown-poster"
        var posts = 0
        while !shared.stop.load(ordering: .relaxed) {
            if center.queue(for: observer.loop).metrics.depth > 256 { sched_yield(); continue }
            center.post(name: .scenarioItem, object: nil, userInfo: nil)
            posts += 1
        }
        print("[center] teardown race: \(iterations) observers removed while 'teardown-poster' posted \(posts) notifications")
        posterDone.signal()
    }
    poster.start()
    var late = 0
    var liveAtRemoval = 0
    for _ in 0..<iterations {
        let flags = Flags()
        let token = center.addObserver(forName: .scenarioItem, on: observer.loop) { _ in
            if flags.removed.load(ordering: .sequentiallyConsistent) { flags.late.add(1, ordering: .relaxed) }
            shared.calls.add(1, ordering: .relaxed)
            if !flags.called.exchange(true, ordering: .relaxed) { flags.firstCall.signal() }
        }
        // Remove it while notifications are flowing to it: after its first delivery (bounded wait).
        if flags.firstCall.wait(timeout: .now() + 1) == .success { liveAtRemoval += 1 }
        token.remove()
        token.waitForRunningHandlers()
        flags.removed.store(true, ordering: .sequentiallyConsistent)
        try observer.loop.performAndWait { } // anything still queued for it has been drained by now
        late += flags.late.load(ordering: .relaxed)
    }
    shared.stop.store(true, ordering: .relaxed)
    _ = posterDone.wait(timeout: .now() + 60)
    print("[center]   \(liveAtRemoval) of them removed while receiving; \(shared.calls.load(ordering: .relaxed)) handler calls before removal; calls after removal returned: \(late) (must be 0); queue: \(center.queue(for: observer.loop).metrics)")
    if late != 0 { throw CenterScenarioFailure(description: "\(late) handler calls started after their observer was removed") }
}
