#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A named, joinable POSIX thread: what the stress engine needs to prove that every thread it
/// started also ended ("all threads join"), with a bounded join so a hang is reported, not waited on.
///
/// Thread-safety: `Sendable`; ``join(timeout:)`` may be called once, from any thread but the thread itself.
public final class JoinableThread: @unchecked Sendable {
    /// The name given at start (also the kernel thread name, truncated to 15 bytes).
    ///
    /// Thread-safety: immutable.
    public let name: String
    private let thread: pthread_t
    private let done = DispatchSemaphore(value: 0)
    private var joined = false // only touched by the single joiner

    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Starts `body` on a new thread named `name`. Traps if the system cannot create a thread (the
    /// stress tool cannot do its job without threads).
    ///
    /// Thread-safety: any thread.
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        self.name = name
        let done = self.done
        let box = Box {
            Thread.current.name = name
            body()
            done.signal()
        }
        let context = Unmanaged.passRetained(box).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.body()
            return nil
        }, context)
        precondition(rc == 0, "JoinableThread: pthread_create failed with errno \(rc)")
        self.thread = thread
    }

    /// Waits until the thread's body returned (at most `timeout` seconds), then joins it.
    /// Returns false when the body is still running at the deadline: the thread is then left
    /// alone (the caller reports a hang).
    ///
    /// Thread-safety: call once, from a thread other than this one.
    @discardableResult
    public func join(timeout: Double = .infinity) -> Bool {
        precondition(!joined, "JoinableThread.join: '\(name)' was already joined")
        let finished: Bool
        if timeout == .infinity {
            done.wait()
            finished = true
        } else {
            finished = done.wait(timeout: .now() + timeout) == .success
        }
        guard finished else { return false }
        joined = true
        // The body has returned; the thread is at most a few instructions from exiting.
        let rc = pthread_join(thread, nil)
        precondition(rc == 0, "JoinableThread.join: pthread_join failed with errno \(rc)")
        return true
    }

    /// Runs `body` on a new thread (so it gets a brand-new `PortRunLoop.current`), waits for it and
    /// returns its result. Waits at most `timeout` seconds: a body still running then is left
    /// alone (its thread is never joined) and ``TimedOut`` is thrown, so a hung body fails its
    /// caller instead of hanging it.
    ///
    /// Thread-safety: any thread.
    public static func run<T: Sendable>(name: String = "fresh", timeout: Double = 60,
                                        _ body: @escaping @Sendable () throws -> T) throws -> T {
        let box = ResultBox<T>()
        let thread = JoinableThread(name: name) { box.set(Result { try body() }) }
        guard thread.join(timeout: timeout) else { throw TimedOut(name: name, seconds: timeout) }
        return try box.get()
    }

    /// ``run(name:timeout:_:)``'s body did not return in time.
    ///
    /// Thread-safety: `Sendable`; immutable.
    public struct TimedOut: Error, CustomStringConvertible, Sendable {
        /// The thread's name.
        public let name: String
        /// How long the caller waited.
        public let seconds: Double
        /// Thread-safety: immutable.
        public var description: String { "the body run on thread '\(name)' did not return within \(seconds) s" }
    }
}

/// A write-once result slot handed between two threads whose hand-over is ordered by a join.
final class ResultBox<T: Sendable>: Sendable {
    private let result = Locked<Result<T, any Error>?>(nil)
    func set(_ r: Result<T, any Error>) { result.withLock { $0 = r } }
    func get() throws -> T {
        guard let r = result.withLock({ $0 }) else { preconditionFailure("ResultBox: no result") }
        return try r.get()
    }
}
