import Foundation
import PortRunLoopStressEngine
import Synchronization

/// Whether something should stop (the run: its duration passed or a signal came; a load: its
/// stop began).
///
/// Thread-safety: `Sendable`; any thread.
final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    var isRaised: Bool { raised.load(ordering: .acquiring) }
    func raise() { raised.store(true, ordering: .releasing) }
}

/// A thread that runs `step` `perSecond` times a second (in batches every 10 ms) until `stop` is
/// raised: the soak's load is steady, not flat out, so a 2-core machine runs every part of it.
///
/// Thread-safety: `Sendable`; ``join()`` once, from another thread.
final class PacedThread: Sendable {
    let name: String
    private let thread: JoinableThread

    init(_ name: String, perSecond: Double, stop: StopFlag, _ step: @escaping @Sendable (Int) -> Void) {
        self.name = name
        thread = JoinableThread(name: name) {
            let tick = 0.01
            let start = ContinuousClock.now
            var done = 0
            var index = 0
            while !stop.isRaised {
                let elapsed = (ContinuousClock.now - start).seconds
                let due = Int(elapsed * perSecond) + 1
                // More than a second behind (a step that waited): skip it rather than burst.
                if Double(due - done) > perSecond + 1 { done = due - 1 }
                while done < due && !stop.isRaised {
                    step(index)
                    index += 1
                    done += 1
                }
                usleep(UInt32(tick * 1_000_000))
            }
        }
    }

    /// Waits for the thread to end (at most 60 s); false if it did not.
    @discardableResult
    func join() -> Bool { thread.join(timeout: 60) }
}
