import Foundation
import PortRunLoopKit
import Synchronization

/// What the stream scenario's two sides saw, written on their loop threads and read once both
/// connections closed.
private struct StreamEvidence {
    var serverThreads: Set<String> = []
    var serverEvents: [String] = []
    var clientThreads: Set<String> = []
    var clientEvents: [String] = []
    var clientReads = 0
    var queuedAfterWrite = 0
    var echoed: [UInt8] = []
    var connectFailure: String?
}

/// A TCP echo server and its client on stream sockets, each on its own named loop thread: the
/// client writes three lines and an 8 MiB block at once (more than the socket takes: the rest waits
/// in the connection's outbound queue and goes out as the echo drains it), reads everything back
/// and closes; the server's connection sees the end of input and closes too. Returns false if any
/// check fails.
func runStreamScenario() throws -> Bool {
    let server = try RunLoopThread(name: "echo-server")
    let client = try RunLoopThread(name: "echo-client")
    defer { client.stop(); server.stop() }
    let seen = Mutex(StreamEvidence())
    let bothClosed = DispatchSemaphore(value: 0)
    print("== Scenario 5: a TCP echo server and client on stream sockets ==")

    // The server: each connection writes back whatever it reads.
    let listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: server.loop) { connection in
        connection.onRead = { connection, bytes in
            connection.write(bytes)
            seen.withLock { _ = $0.serverThreads.insert(Thread.current.name ?? "?") }
        }
        connection.onEvent = { _, event in
            seen.withLock { $0.serverEvents.append("\(event)") }
            if case .closed = event { bothClosed.signal() }
        }
    }
    defer { listener.close() }
    print("  server '\(server.name)' listening on \(listener.localEndpoint); client on '\(client.name)'")

    // The client: writes the lines and the block, reads until all of it came back, then closes.
    let lines = (1...3).map { "line \($0) from '\(client.name)'\n" }
    let block = [UInt8](repeating: 0x2A, count: 8 << 20)
    let sent = Array(lines.joined().utf8) + block
    let start = monotonicNanoseconds()
    StreamConnection.connect(to: listener.localEndpoint, on: client.loop) { result in
        guard case .success(let connection) = result else {
            seen.withLock { $0.connectFailure = "\(result)" }
            bothClosed.signal(); bothClosed.signal() // no connection: neither side will report a close
            return
        }
        connection.onRead = { connection, bytes in
            let count = seen.withLock {
                $0.echoed.append(contentsOf: bytes)
                $0.clientReads += 1
                $0.clientThreads.insert(Thread.current.name ?? "?")
                return $0.echoed.count
            }
            if count >= sent.count { connection.close() }
        }
        connection.onEvent = { _, event in
            seen.withLock { $0.clientEvents.append("\(event)") }
            if case .closed = event { bothClosed.signal() }
        }
        for line in lines { connection.write(line) }
        connection.write(block)
        seen.withLock { $0.queuedAfterWrite = connection.queuedByteCount }
    }

    let finished = bothClosed.wait(timeout: .now() + 30) == .success && bothClosed.wait(timeout: .now() + 30) == .success
    let elapsed = monotonicNanoseconds() - start
    let evidence = seen.withLock { $0 }
    if let failure = evidence.connectFailure { print("  connect failed: \(failure)") }
    let echoedLines = String(decoding: evidence.echoed.prefix(sent.count - block.count), as: UTF8.self)
    print("  sent:              \(lines.count) lines and an 8 MiB block (\(sent.count) bytes) in \(lines.count + 1) writes")
    print("  queued after the last write: \(evidence.queuedAfterWrite) bytes (sent as the socket drained)")
    print("  echoed back:       \(evidence.echoed.count) bytes in \(evidence.clientReads) reads\(finished ? "" : "  (TIMED OUT after 30 s)")")
    for line in echoedLines.split(separator: "\n") { print("    \(line)") }
    print("  client events:     \(evidence.clientEvents.joined(separator: ", "))")
    print("  server events:     \(evidence.serverEvents.joined(separator: ", "))")
    print("  handler threads:   server \(evidence.serverThreads.sorted()), client \(evidence.clientThreads.sorted())")
    print("  listener:          \(listener.statistics.accepted) accepted, \(listener.statistics.dropped) dropped")
    print("  wall time:         \(LatencySummary.format(elapsed))")

    let ok = finished && evidence.connectFailure == nil && evidence.echoed == sent
        && evidence.serverThreads == [server.name] && evidence.clientThreads == [client.name]
        && evidence.clientEvents.last == "closed(nil)" && evidence.serverEvents.last == "closed(nil)"
        && listener.statistics.accepted == 1
    print("  result: \(ok ? "OK — every byte came back, in order; each side ran on its own loop thread and closed cleanly" : "FAILED")")
    return ok
}
