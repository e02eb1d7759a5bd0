import CHiredis
import Foundation
import Logging
import PortRunLoopBus
import PortRunLoopKit

/// One search for the master (loop thread): asks the sentinels in turn, from `first`, for the
/// master's address (`SENTINEL get-master-addr-by-name <name>`), each on a connection of its own
/// bounded by the endpoint's connect and command timeouts. A sentinel that cannot be reached,
/// does not answer, answers nil (it does not know the name), answers an error or something that
/// is not an IP address and port is skipped; the first usable answer ends the search, and so
/// does the last sentinel's failure (with every reason). Ends once, unless cancelled first.
///
/// Thread-safety: `@unchecked Sendable` only so that the loop's blocks can capture it: made, used
/// and ended on its loop's thread only.
final class SentinelDiscovery: RedisConnectionOwner, @unchecked Sendable {
    /// How a search ended.
    ///
    /// Thread-safety: a value type.
    enum Outcome {
        /// The sentinel at `sentinel` (its index) named the master at `master`.
        case found(master: RedisSentinels.Address, sentinel: Int)
        /// No sentinel named it; why, per sentinel.
        case failed(String)
    }

    private let loop: PortRunLoop
    private let endpoint: RedisEndpoint
    private let sentinels: RedisSentinels
    private let logger: Logger
    private let modes: [RunLoop.Mode]
    /// Called before each sentinel is asked.
    private let asking: (RedisSentinels.Address) -> Void
    private let finished: (Outcome) -> Void
    private var index: Int
    private var asked = 0
    private var connection: RedisConnection?
    /// The current sentinel's usable answer, or why its answer was not.
    private var answer: Result<RedisSentinels.Address, SentinelAnswerError>?
    private var failures: [String] = []
    private var ended = false

    init(loop: PortRunLoop, endpoint: RedisEndpoint, sentinels: RedisSentinels, first: Int, logger: Logger, modes: [RunLoop.Mode],
         asking: @escaping (RedisSentinels.Address) -> Void, finished: @escaping (Outcome) -> Void) {
        self.loop = loop
        self.endpoint = endpoint
        self.sentinels = sentinels
        self.logger = logger
        self.modes = modes
        self.asking = asking
        self.finished = finished
        self.index = first % sentinels.addresses.count
    }

    /// Asks the first sentinel.
    func start() { askNext() }

    /// Ends the search without an outcome (the transport closed, or a sentinel announced the
    /// master meanwhile). From a timer or a queued block only.
    func cancel() {
        ended = true
        connection?.drop("the search for the master was cancelled")
        connection = nil
    }

    private func askNext() {
        guard !ended else { return }
        guard asked < sentinels.addresses.count else {
            end(.failed("no sentinel named master \(sentinels.masterName): " + failures.joined(separator: "; ")))
            return
        }
        let sentinel = sentinels.addresses[index]
        asked += 1
        answer = nil
        asking(sentinel)
        let target = RedisConnectionTarget(host: sentinel.host, port: sentinel.port, username: nil, password: sentinels.password)
        let made = RedisConnection(loop: loop, endpoint: endpoint, target: target, label: "sentinel", logger: logger, modes: modes)
        made.owner = self
        connection = made
        made.open()
    }

    private func end(_ outcome: Outcome) {
        guard !ended else { return }
        ended = true
        finished(outcome)
    }

    // MARK: RedisConnectionOwner

    func connectionOpened(_ connection: RedisConnection) {
        guard connection === self.connection, !ended else { return }
        let question = ["SENTINEL", "get-master-addr-by-name", sentinels.masterName].map { Array($0.utf8) }
        if !connection.send(question) { connection.drop("hiredis refused the question") }
    }

    func connection(_ connection: RedisConnection, received reply: UnsafeMutablePointer<redisReply>?) {
        guard connection === self.connection, let reply, answer == nil else { return }
        connection.noteReply()
        answer = Self.read(reply.pointee)
        // Answered: the connection ends from the next turn (hiredis is not re-entered).
        connection.later { $0.drop("answered") }
    }

    func connectionEnded(_ connection: RedisConnection, reason: String, wasOpen: Bool) {
        guard connection === self.connection, !ended else { return }
        self.connection = nil
        let sentinel = sentinels.addresses[index]
        switch answer {
        case .success(let master)?:
            end(.found(master: master, sentinel: index))
            return
        case .failure(let error)?:
            failures.append("\(sentinel) \(error.reason)")
        case nil:
            failures.append("\(sentinel): \(reason)")
        }
        logger.info("Redis sentinel gave no master", metadata: [
            BusLogKey.endpoint: "\(endpoint)", RedisLogKey.sentinel: "\(sentinel)", BusLogKey.reason: "\(failures.last ?? reason)",
        ])
        index = (index + 1) % sentinels.addresses.count
        askNext()
    }

    func connectionFinishedReading(_ connection: RedisConnection) {}

    func connectionSentHealthCheck(_ connection: RedisConnection) {}

    /// The master's address from a `get-master-addr-by-name` reply: `[ip, port]`.
    private static func read(_ reply: redisReply) -> Result<RedisSentinels.Address, SentinelAnswerError> {
        if reply.type == REDIS_REPLY_NIL { return .failure(.init(reason: "does not know the master")) }
        if reply.type == REDIS_REPLY_ERROR { return .failure(.init(reason: "answered \(RedisReply.string(reply) ?? "an error")")) }
        guard reply.type == REDIS_REPLY_ARRAY, reply.elements == 2, let elements = reply.element,
              let host = elements[0].flatMap({ RedisReply.string($0.pointee) }),
              let port = elements[1].flatMap({ RedisReply.string($0.pointee) }) else {
            return .failure(.init(reason: "answered something else than an address and a port"))
        }
        guard let master = RedisSentinels.Address(answer: host, port: port) else {
            return .failure(.init(reason: "answered \(host) \(port), not an IP address and port"))
        }
        return .success(master)
    }
}

/// Why a sentinel's answer was not used.
///
/// Thread-safety: a value type.
struct SentinelAnswerError: Error {
    let reason: String
}
