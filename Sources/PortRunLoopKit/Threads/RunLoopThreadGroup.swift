import Logging
import Synchronization

/// A fixed set of ``RunLoopThread``s, for spreading work (a server's connections) over several
/// cores: each thread runs its own ``PortRunLoop``, and ``next()`` hands the loops out in turn.
///
/// ```swift
/// let group = try RunLoopThreadGroup(name: "io", count: 4)
/// let listener = try StreamListener(on: .host("0.0.0.0", port: 8080), group: group) { connection in
///     connection.onRead = { connection, bytes in connection.write(bytes) }   // on that connection's loop
/// }
/// ...
/// listener.close()
/// group.stop()
/// ```
///
/// Thread-safety: `Sendable`; every member from any thread.
public final class RunLoopThreadGroup: Sendable {
    /// The group's name; thread `i` is named "`name`-`i`".
    ///
    /// Thread-safety: immutable.
    public let name: String
    /// The threads, in order.
    ///
    /// Thread-safety: immutable; the threads are `Sendable`.
    public let threads: [RunLoopThread]
    /// The threads' loops, in the same order.
    ///
    /// Thread-safety: immutable; the loops are `Sendable`.
    public let loops: [PortRunLoop]
    private let cursor = Atomic<Int>(0)

    /// Starts `count` threads named "`name`-0" ... and returns once every loop exists. If one
    /// cannot be started, those already started are stopped and the error is thrown.
    ///
    /// - Parameters:
    ///   - name: the group's name, the prefix of its threads' names.
    ///   - count: how many threads to start (at least one).
    ///   - logger: each loop's ``PortRunLoop/logger`` (see ``RunLoopThread/init(name:logger:)``).
    /// - Throws: ``PortRunLoopError/threadCreationFailed(errno:)`` or a loop's creation error.
    ///
    /// Thread-safety: any thread.
    public init(name: String, count: Int, logger: Logger = .portRunLoopDisabled) throws(PortRunLoopError) {
        Misuse.check(count > 0, "RunLoopThreadGroup: count must be positive, got \(count)")
        var threads: [RunLoopThread] = []
        threads.reserveCapacity(count)
        for index in 0..<count {
            do throws(PortRunLoopError) {
                threads.append(try RunLoopThread(name: "\(name)-\(index)", logger: logger))
            } catch {
                for thread in threads { thread.stop() }
                throw error
            }
        }
        self.name = name
        self.threads = threads
        self.loops = threads.map(\.loop)
    }

    /// How many threads the group has.
    ///
    /// Thread-safety: immutable.
    public var count: Int { threads.count }

    /// The next loop in turn (round-robin over ``loops``).
    ///
    /// Thread-safety: any thread.
    public func next() -> PortRunLoop {
        let turn = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(UInt(bitPattern: turn) % UInt(loops.count))]
    }

    /// Stops every thread (``RunLoopThread/stop()``: each handles what was queued before, shuts its
    /// loop down and is joined), and returns once all are stopped. Idempotent. Called from one of
    /// the group's own threads, that thread cannot be joined: it stops once its handler returns.
    ///
    /// Thread-safety: any thread.
    public func stop() {
        for thread in threads { thread.stop() }
    }

    /// True once every thread has stopped.
    ///
    /// Thread-safety: any thread.
    public var isStopped: Bool { threads.allSatisfy(\.isStopped) }
}
