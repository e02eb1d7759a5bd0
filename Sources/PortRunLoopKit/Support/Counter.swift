import Synchronization

/// A statistics counter written by one thread (the loop's owner) and read by any.
///
/// One writer means increment is a relaxed load plus a relaxed store (no locked instruction);
/// readers see a recent value, never a torn one.
/// Thread-safety: ``increment(by:)`` from the single writing thread only; ``value`` from any thread.
struct OwnerCounter: ~Copyable {
    private let storage = Atomic<Int>(0)

    @inline(__always) func increment(by amount: Int = 1) {
        storage.store(storage.load(ordering: .relaxed) &+ amount, ordering: .relaxed)
    }

    var value: Int { storage.load(ordering: .relaxed) }
}

/// A statistics counter any thread may increment (one relaxed atomic add).
///
/// Thread-safety: fully thread-safe.
struct SharedCounter: ~Copyable {
    private let storage = Atomic<Int>(0)

    @inline(__always) func increment(by amount: Int = 1) {
        storage.add(amount, ordering: .relaxed)
    }

    var value: Int { storage.load(ordering: .relaxed) }
}
