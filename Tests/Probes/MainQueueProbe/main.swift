// MainQueueProbe: a tiny program whose *main thread* runs `PortRunLoop.main.run()`, used by
// MainQueueDrainTests (swift-testing runs tests off the main thread, and its exit tests do too, so
// only a separate program can show what happens on a real main thread).
//
// Usage: MainQueueProbe [touch-main-loop-first-off-main] [first-run-only]
// With first-run-only it queues one main-queue block on the main thread and makes one
// `run(mode:before:)` (corelibs' test_mainDispatchQueueCallout): that run must run the block. Otherwise it prints one line per check and exits 0 when every check passed, 1 when one failed, 3 when the
// checks did not finish within 30 seconds (a safety bound, never used for ordering).
import Dispatch
import Foundation
import PortRunLoopKit

/// A lock-protected value on `NSLock`, which ThreadSanitizer sees (`Synchronization.Mutex` is a
/// futex inside the uninstrumented stdlib on Linux, so TSan would report false races and make the
/// probe exit with TSan's status 66).
final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value // guarded by `lock`
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock(); defer { lock.unlock() }
        return try body(&value)
    }
}

let results = Guarded<[String]>([])
let burst = Guarded<[Int]>([])
func record(_ line: String) { results.withLock { $0.append(line) } }

@MainActor final class MainCounter {
    var value = 0
}

let finished = DispatchSemaphore(value: 0)
let offMainFirst = CommandLine.arguments.dropFirst().contains("touch-main-loop-first-off-main")

// Watchdog: if the checks hang (the main queue is never drained), fail instead of hanging the test.
Thread.detachNewThread {
    if finished.wait(timeout: .now() + 30) == .timedOut {
        let message = "FAIL timeout: main-queue work did not run within 30 s; recorded: \(results.withLock { $0 })\n"
        FileHandle.standardOutput.write(Data(message.utf8))
        exit(3)
    }
}

if offMainFirst {
    // The main loop is created on another thread: its main-queue fd source is registered through
    // the loop's queue instead of at once.
    let created = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        _ = PortRunLoop.main.name
        created.signal()
    }
    created.wait()
}

precondition(Thread.isMainThread, "MainQueueProbe: top-level code must run on the main thread")

if CommandLine.arguments.dropFirst().contains("first-run-only") {
    // A block queued on the main thread before its loop ever ran: the first run serves it. The
    // date only bounds a run that would miss it (the run returns as soon as the block ran).
    DispatchQueue.main.async { record("first-run-block main=\(Thread.isMainThread)") }
    let returned = PortRunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 20))
    record("first-run returned=\(returned)")
    finished.signal()
    let got = results.withLock { $0 }
    for line in got { print(line) }
    let passed = got == ["first-run-block main=true", "first-run returned=true"]
    print(passed ? "PASS" : "FAIL")
    exit(passed ? 0 : 1)
}

// The driver: waits until the main loop is surely running, then targets the main queue in every
// way it can and checks each ran on the main thread, then stops the main loop.
Thread.detachNewThread {
    do {
        // Runs only while the main thread is inside PortRunLoop.main.run().
        try PortRunLoop.main.performAndWait { record("loop-running main=\(Thread.isMainThread)") }
    } catch {
        record("FAIL performAndWait: \(error)")
    }

    // 1. A plain DispatchQueue.main.async block.
    let asyncRan = DispatchSemaphore(value: 0)
    DispatchQueue.main.async {
        record("dispatch-async main=\(Thread.isMainThread)")
        // A main-queue block is on the main actor.
        MainActor.assumeIsolated { record("dispatch-async isolated=\(MainCounter().value == 0)") }
        asyncRan.signal()
    }
    asyncRan.wait()

    // 2. DispatchQueue.main.sync from another thread (blocks until the main loop drains it).
    let value = DispatchQueue.main.sync { Thread.isMainThread ? 42 : -1 }
    record("dispatch-sync value=\(value)")

    // 3. @MainActor jobs: a Task on the main actor, MainActor.run, and a @MainActor class.
    let taskDone = DispatchSemaphore(value: 0)
    Task { @MainActor in
        record("mainactor-task main=\(Thread.isMainThread)")
        let counter = MainCounter()
        counter.value += 1
        record("mainactor-class value=\(counter.value)")
        taskDone.signal()
    }
    taskDone.wait()
    let runDone = DispatchSemaphore(value: 0)
    Task.detached {
        let onMain = await MainActor.run { Thread.isMainThread }
        record("mainactor-run main=\(onMain)")
        runDone.signal()
    }
    runDone.wait()

    // 4. Many blocks in a burst: all run, in order.
    let burstDone = DispatchSemaphore(value: 0)
    for i in 0..<1000 {
        DispatchQueue.main.async {
            burst.withLock { $0.append(i) }
            if i == 999 { burstDone.signal() }
        }
    }
    burstDone.wait()
    record("dispatch-burst ordered=\(burst.withLock { $0 == Array(0..<1000) })")

    PortRunLoop.main.stop()
}

// The server entry point: with nothing else scheduled it keeps running (the main queue's source
// keeps the common modes non-empty) until stop().
PortRunLoop.main.run()
record("run-returned")
finished.signal()

let expected = [
    "loop-running main=true",
    "dispatch-async main=true",
    "dispatch-async isolated=true",
    "dispatch-sync value=42",
    "mainactor-task main=true",
    "mainactor-class value=1",
    "mainactor-run main=true",
    "dispatch-burst ordered=true",
    "run-returned",
]
let got = results.withLock { $0 }
for line in got { print(line) }
if got == expected {
    print("PASS")
    exit(0)
} else {
    print("FAIL expected \(expected)")
    exit(1)
}
