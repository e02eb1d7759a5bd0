import Foundation
import Logging
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// A center with durable names on its own loop thread: posts `n` (and `poster`) in userInfo, and,
/// once ``observe(_:)`` was called, collects what it receives (closed by ``shutDown()``).
final class DurableMember: @unchecked Sendable {
    let thread: RunLoopThread
    let center: BusNotificationCenter
    /// What its observation received: `poster` and `n` of each notification, in delivery order.
    let seen = Collector<(poster: String, n: Int)>()
    private let tokens = PortRunLoopTestSupport.Locked<[AnyObject]>([])

    /// A durable configuration for `names`, as `consumer` of `group`, reads blocking 200 ms.
    static func durable(_ names: [String], group: String = "service", consumer: String = "consumer-1",
                        maximumLength: Int = 10_000) -> RedisDurableNotifications {
        RedisDurableNotifications(names: Set(names.map { Notification.Name($0) }), group: group, consumer: consumer,
                                  maximumLength: maximumLength, readCount: 50, blockTimeout: .milliseconds(200))
    }

    /// An endpoint to the server on `port` with `durable`, quick to reconnect.
    static func endpoint(port: Int, durable: RedisDurableNotifications) -> RedisEndpoint {
        var endpoint = RedisEndpoint(port: port, connectTimeout: .seconds(1), commandTimeout: .seconds(2),
                                     reconnectPolicy: RedisReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)))
        endpoint.durable = durable
        return endpoint
    }

    init(_ label: String, endpoint: RedisEndpoint) throws {
        thread = try RunLoopThread(name: label)
        var logger = Logger(label: label, factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = ProcessInfo.processInfo.environment["REDIS_TEST_DEBUG"] != nil ? .debug : .critical
        do {
            center = try BusNotificationCenter(redis: endpoint, loop: thread.loop, logger: logger)
        } catch {
            thread.stop()
            throw error
        }
    }

    /// Observes `name` (nil: every name) on the member's loop.
    func observe(_ name: String?) throws {
        let seen = seen
        let token = try center.addObserver(forName: name.map { Notification.Name($0) }, on: thread.loop) { note in
            seen.append((note.userInfo?["poster"] as? String ?? "?", note.userInfo?["n"] as? Int ?? -1))
        }
        tokens.withLock { $0.append(token) }
    }

    /// Posts `name` with `n` from `poster`.
    func post(_ name: String, _ n: Int, poster: String = "p") throws {
        try center.post(name: .init(name), userInfo: ["n": n, "poster": poster])
    }

    /// The values of `n` received, in order.
    var numbers: [Int] { seen.values.map(\.n) }

    func shutDown() {
        tokens.withLock { $0.removeAll() }
        center.close()
        thread.stop()
    }
}

/// A temporary directory for a server's persistence files, removed by ``remove()``.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("redis-durable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
