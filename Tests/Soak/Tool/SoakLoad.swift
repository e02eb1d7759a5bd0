import Foundation
import PortRunLoopKit

/// One part of the soak: what it runs, what it checks, and how it is stopped.
///
/// Thread-safety: ``start()``, ``supervise(elapsed:)``, ``report()`` and ``stop()`` are called from
/// the soak's main thread only (children and daemons are started from it, so they die with it).
protocol SoakLoad: AnyObject {
    /// Its name in the report.
    var name: String { get }
    /// Starts its threads, sources and peers.
    func start() throws
    /// Called about ten times a second: restarts, churn, overdue checks.
    func supervise(elapsed: Double)
    /// Called before each report line: settles counts read from the library's metrics.
    func report()
    /// Stops its load and waits (bounded) for what is in flight, then settles every check.
    func stop()
    /// Releases what is left (threads, daemons, children), after every load stopped.
    func tearDown()
}

extension SoakLoad {
    func supervise(elapsed: Double) {}
    func report() {}
    func tearDown() {}
}

/// The loop threads most loads deliver to: stable for the whole run.
///
/// Thread-safety: `Sendable`; immutable.
final class SoakHubs: Sendable {
    let threads: [RunLoopThread]

    init(count: Int) throws {
        threads = try (0..<count).map { try SoakLoops.thread("soak-hub-\($0)") }
    }

    var count: Int { threads.count }
    subscript(index: Int) -> PortRunLoop { threads[index % threads.count].loop }

    func stop() { for thread in threads { thread.stop() } }
}

/// Numbers carried as message components and notification fields.
enum Payload {
    static func data(_ values: UInt64...) -> Data {
        var data = Data(capacity: 8 * values.count)
        for value in values { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }

    /// The `index`th number in `data`, or nil if it is too short.
    static func value(_ data: Data, at index: Int = 0) -> UInt64? {
        guard data.count >= 8 * (index + 1) else { return nil }
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { target in
            data.withUnsafeBytes { source in
                target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[(8 * index)..<(8 * index + 8)]))
            }
        }
        return UInt64(littleEndian: value)
    }
}

/// Waits (at most `seconds`, looking every 10 ms) until `done` holds; whether it did.
@discardableResult
func waitUntil(seconds: Double, _ done: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while !done() {
        if ContinuousClock.now >= deadline { return false }
        usleep(10_000)
    }
    return true
}
