import Foundation
import PortRunLoopKit
import PortRunLoopRedis
import Testing
import PortRunLoopTestSupport

/// A Redis master, one replica (`--replicaof`) and Redis Sentinels watching them as
/// ``masterName``, all on 127.0.0.1 and random free ports, with their configuration in a
/// temporary directory: ready when `init` returns (the replica in sync, every sentinel seeing the
/// replica and the other sentinels, each waited for with a deadline), all killed by
/// ``shutDown()`` (or release).
///
/// The sentinels find the master down after ``downAfter`` and fail over within
/// ``failoverTimeout``.
final class SentinelCluster: @unchecked Sendable {
    static let masterName = "mymaster"
    static let downAfter = 500 // ms
    static let failoverTimeout = 3000 // ms

    let master: RedisServer
    let replica: RedisServer
    let directory: URL
    private let processes = PortRunLoopTestSupport.Locked<[Int: StreamingProcess]>([:])
    /// The sentinels' ports, in the order they were started.
    private(set) var sentinelPorts: [Int] = []

    /// Starts the master and the replica, waits for the replica to be in sync, then starts
    /// `sentinels` sentinels with `quorum`, and waits until each sees the replica and the others.
    init(sentinels: Int = 3, quorum: Int = 2) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sentinels-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The replica's full sync goes through an RDB file: in the temporary directory, not the working one.
        master = try RedisServer(extraArguments: ["--dir", directory.path])
        replica = try RedisServer(extraArguments: ["--dir", directory.path, "--replicaof", "127.0.0.1", "\(master.port)"])
        // Sentinels learn of replicas from the master's INFO: at once when they connect, then every 10 s.
        let synced = Self.poll { Self.text(try Self.command(self.master.port, ["INFO", "replication"]))
            .contains("port=\(self.replica.port),state=online") }
        guard synced else { throw SentinelClusterError.notReady("the replica did not sync with the master") }
        for _ in 0..<sentinels {
            sentinelPorts.append(try startSentinel(monitoring: master.port, name: Self.masterName, quorum: quorum))
        }
        for port in sentinelPorts {
            let ready = Self.poll {
                let quorum = Self.text(try Self.command(port, ["SENTINEL", "ckquorum", Self.masterName]))
                let replicas = Self.text(try Self.command(port, ["SENTINEL", "replicas", Self.masterName]))
                return quorum.hasPrefix("OK \(sentinels) usable") && replicas.contains("\(self.replica.port)")
            }
            guard ready else { throw SentinelClusterError.notReady("sentinel \(port) did not see the replica and the other sentinels") }
        }
    }

    /// Starts one more sentinel, monitoring the server at `port` as `name` (which may be a
    /// replica, for a sentinel whose answer is wrong); its port, once it monitors.
    func startSentinel(monitoring port: Int, name: String, quorum: Int) throws -> Int {
        let sentinelPort = try freeLoopbackPort()
        let file = directory.appendingPathComponent("sentinel-\(sentinelPort).conf")
        let configuration = """
            port \(sentinelPort)
            bind 127.0.0.1
            protected-mode no
            daemonize no
            logfile ""
            dir \(directory.path)
            sentinel resolve-hostnames no
            sentinel monitor \(name) 127.0.0.1 \(port) \(quorum)
            sentinel down-after-milliseconds \(name) \(Self.downAfter)
            sentinel failover-timeout \(name) \(Self.failoverTimeout)

            """
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let process = try StreamingProcess(RedisTools.server, [file.path, "--sentinel"])
        guard process.wait(for: "+monitor master \(name)", seconds: 10) else {
            let output = process.output
            process.stop()
            throw SentinelClusterError.notReady(output)
        }
        processes.withLock { $0[sentinelPort] = process }
        return sentinelPort
    }

    /// The sentinels as an endpoint takes them, in start order.
    var sentinelAddresses: [(host: String, port: Int)] { sentinelPorts.map { ("127.0.0.1", $0) } }

    /// Kills the sentinel on `port` (SIGKILL) and waits for it to exit.
    func killSentinel(_ port: Int) {
        let process = processes.withLock { $0.removeValue(forKey: port) }
        process?.stop()
    }

    /// The master's port a sentinel names now (nil when it names none, or does not answer).
    func masterPort(accordingTo sentinel: Int) -> Int? {
        guard case .array(let parts)? = try? Self.command(sentinel, ["SENTINEL", "get-master-addr-by-name", Self.masterName]),
              parts.count == 2, case .bulk(let port?) = parts[1] else { return nil }
        return Int(String(decoding: port, as: UTF8.self))
    }

    func shutDown() {
        let all = processes.withLock { all in defer { all.removeAll() }; return all }
        for process in all.values { process.stop() }
        master.stop()
        replica.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { shutDown() }

    /// One command to the server or sentinel on `port`, on a connection of its own; its reply.
    static func command(_ port: Int, _ arguments: [String]) throws -> RawRedisClient.Reply {
        let client = try RawRedisClient(port: port)
        try client.send(arguments.map { Array($0.utf8) })
        return try client.reply()
    }

    /// A reply's text: a status, an error, a bulk string, or an array's elements one per line.
    static func text(_ reply: RawRedisClient.Reply) -> String {
        switch reply {
        case .status(let text), .error(let text): text
        case .integer(let value): "\(value)"
        case .bulk(let bytes): bytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
        case .array(let items): items.map(text).joined(separator: "\n")
        }
    }

    /// Asks `condition` every 20 ms (each ask opens a connection) until it holds, at most 20 s; a
    /// failed command counts as not yet.
    static func poll(_ condition: () throws -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if (try? condition()) == true { return true }
            usleep(20_000)
        }
        return (try? condition()) == true
    }
}

enum SentinelClusterError: Error {
    case notReady(String)
}
