import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// LockWord (directly and through TracedMutex) and its ParkingLot: mutual exclusion under
/// contention, and that threads parked behind a held lock all get it once it is released.
@Suite(.timeLimit(.minutes(1))) struct LockWordTests {
    /// A LockWord in an object of its own, keyed by the object's address (as MessagePort keys the
    /// word on its state by the state's address).
    final class WordLock: @unchecked Sendable {
        private let word = LockWord()
        private var key: UnsafeRawPointer { UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) }
        func lock() { word.lock(key: key) }
        func unlock() { word.unlock(key: key) }
        func withLock<R>(_ body: () -> R) -> R { lock(); defer { unlock() }; return body() }
    }

    /// Runs `threads` threads that each call `body` `iterations` times, and joins them.
    private func hammer(threads: Int, iterations: Int, _ body: @escaping @Sendable () -> Void) {
        let group = DispatchGroup()
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<iterations { body() }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 50) == .success)
    }

    @Test func tracedMutexExcludesUnderContention() {
        let counter = TracedMutex(0)
        // A non-atomic read-modify-write inside: any overlap would lose increments.
        hammer(threads: 4, iterations: 50_000) {
            counter.withLock { value in
                let seen = value
                value = seen + 1
            }
        }
        #expect(counter.withLock { $0 } == 200_000)
    }

    @Test func lockWordExcludesUnderContention() {
        final class Box: @unchecked Sendable {
            let lock = WordLock()
            var value = 0 // guarded by `lock`
        }
        let box = Box()
        hammer(threads: 4, iterations: 50_000) {
            box.lock.lock()
            box.value += 1
            box.lock.unlock()
        }
        #expect(box.lock.withLock { box.value } == 200_000)
    }

    @Test func threadsParkedBehindAHeldLockAllGetIt() {
        // The main test thread holds the lock while the others arrive: they spin, then park in
        // the parking lot. The lock is released only once every one of them is asleep (state S
        // in /proc), so the release goes through the parking lot's wake-up path.
        let lock = WordLock()
        let acquired = Locked(0)
        let threadIDs = Locked<[Int32]>([])
        let started = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        lock.lock()
        for _ in 0..<6 {
            group.enter()
            Thread.detachNewThread {
                if let tid = FoundationBlockWaitTests.currentTID() { threadIDs.withLock { $0.append(tid) } }
                started.signal()
                lock.lock()
                acquired.withLock { $0 += 1 }
                lock.unlock()
                group.leave()
            }
        }
        for _ in 0..<6 { #expect(started.wait(timeout: .now() + 30) == .success) }
        #expect(threadIDs.withLock { $0.count } == 6)
        for tid in threadIDs.withLock({ $0 }) {
            #expect(FoundationBlockWaitTests.waitUntilAsleep(tid), "thread \(tid) should park behind the held lock")
        }
        #expect(acquired.withLock { $0 } == 0, "nobody gets a held lock")
        lock.unlock()
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(acquired.withLock { $0 } == 6)
    }

    @Test func cacheLineBlocksAreAlignedAndWholeLines() {
        let pointer = CacheLine.allocate((1, 2, 3) as (Int, Int, Int))
        defer { CacheLine.free(pointer) }
        #expect(UInt(bitPattern: pointer) % UInt(CacheLine.size) == 0)
        #expect(pointer.pointee == (1, 2, 3))
    }
}
