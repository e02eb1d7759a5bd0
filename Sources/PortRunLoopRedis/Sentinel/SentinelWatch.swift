import CHiredis
import Foundation
import Logging
import PortRunLoopBus
import PortRunLoopKit

/// A subscription to `+switch-master` on one sentinel (loop thread), so that a center hears of a
/// failover as soon as the sentinels make it. A `+switch-master` message naming the endpoint's
/// master (`<name> <old ip> <old port> <new ip> <new port>`) is reported with the new address,
/// from a queued block (not from inside hiredis). The connection is health-checked like the
/// center's subscribed one (a `SUBSCRIBE +switch-master` again after
/// ``RedisEndpoint/healthCheckInterval`` of silence); when it ends, the next sentinel is
/// subscribed to after the reconnection policy's delay (doubling while attempts fail). A
/// failover announced while no sentinel is subscribed is not heard: the center learns of it
/// when it asks the sentinels again after losing the old master.
///
/// Thread-safety: `@unchecked Sendable` only so that the loop's blocks and timers can capture it:
/// made, used and stopped on its loop's thread only.
final class SentinelWatch: RedisConnectionOwner, @unchecked Sendable {
    private let loop: PortRunLoop
    private let endpoint: RedisEndpoint
    private let sentinels: RedisSentinels
    private let logger: Logger
    private let modes: [RunLoop.Mode]
    private let switched: (RedisSentinels.Address) -> Void
    private var index: Int
    private var connection: RedisConnection?
    private var retryTimer: RunLoopTimer?
    private var delay: Duration
    private var stopped = false

    static let channel = "+switch-master"
    private static let subscribe: [[UInt8]] = [Array("SUBSCRIBE".utf8), Array(channel.utf8)]

    init(loop: PortRunLoop, endpoint: RedisEndpoint, sentinels: RedisSentinels, first: Int, logger: Logger, modes: [RunLoop.Mode],
         switched: @escaping (RedisSentinels.Address) -> Void) {
        self.loop = loop
        self.endpoint = endpoint
        self.sentinels = sentinels
        self.logger = logger
        self.modes = modes
        self.switched = switched
        self.index = first % sentinels.addresses.count
        self.delay = endpoint.reconnectPolicy.initialDelay
    }

    /// Subscribes on the first sentinel.
    func start() { open() }

    /// Ends the subscription for good. From a timer or a queued block only.
    func stop() {
        stopped = true
        retryTimer?.invalidate()
        retryTimer = nil
        connection?.drop("closed")
        connection = nil
    }

    private func open() {
        retryTimer = nil
        guard !stopped, connection == nil else { return }
        let sentinel = sentinels.addresses[index]
        let target = RedisConnectionTarget(host: sentinel.host, port: sentinel.port, username: nil, password: sentinels.password)
        let made = RedisConnection(loop: loop, endpoint: endpoint, target: target, label: "sentinel watch", logger: logger,
                                   modes: modes, healthCheck: Self.subscribe)
        made.owner = self
        connection = made
        made.open()
    }

    // MARK: RedisConnectionOwner

    func connectionOpened(_ connection: RedisConnection) {
        guard connection === self.connection, !stopped else { return }
        if !connection.send(Self.subscribe) { connection.drop("hiredis refused the subscription") }
    }

    func connection(_ connection: RedisConnection, received reply: UnsafeMutablePointer<redisReply>?) {
        guard connection === self.connection, let reply = reply?.pointee else { return }
        guard reply.type == REDIS_REPLY_ARRAY, reply.elements >= 3, let elements = reply.element,
              let kind = elements[0].flatMap({ RedisReply.string($0.pointee) }) else {
            if reply.type == REDIS_REPLY_ERROR { connection.noteReply() }
            return
        }
        if kind == "subscribe" {
            connection.noteReply()
            // A sentinel that answers: the next loss starts the delays again.
            delay = endpoint.reconnectPolicy.initialDelay
            return
        }
        guard kind == "message", let text = elements[2].flatMap({ RedisReply.string($0.pointee) }) else { return }
        let fields = text.split(separator: " ")
        guard fields.count == 5, fields[0] == sentinels.masterName else { return }
        guard let master = RedisSentinels.Address(answer: String(fields[3]), port: String(fields[4])) else {
            logger.warning("Redis sentinel announced a master that is not an IP address and port", metadata: [
                BusLogKey.endpoint: "\(endpoint)", RedisLogKey.sentinel: "\(sentinels.addresses[index])", BusLogKey.reason: "\(text)",
            ])
            return
        }
        loop.perform(inModes: modes) { [self] in
            guard !stopped else { return }
            switched(master)
        }
    }

    func connectionEnded(_ connection: RedisConnection, reason: String, wasOpen: Bool) {
        guard connection === self.connection else { return }
        self.connection = nil
        guard !stopped else { return }
        logger.info("Redis sentinel subscription ended; subscribing on the next sentinel", metadata: [
            BusLogKey.endpoint: "\(endpoint)", RedisLogKey.sentinel: "\(sentinels.addresses[index])", BusLogKey.reason: "\(reason)",
        ])
        index = (index + 1) % sentinels.addresses.count
        let wait = delay
        delay = endpoint.reconnectPolicy.next(after: delay)
        let timer = RunLoopTimer(after: wait.seconds) { [weak self] _ in self?.open() }
        retryTimer = timer
        for mode in modes { loop.add(timer, forMode: mode) }
    }

    func connectionFinishedReading(_ connection: RedisConnection) {}

    func connectionSentHealthCheck(_ connection: RedisConnection) {}
}
