import Foundation

/// The second process of the bus-notification scenarios (`CrossProcessBenchPeer
/// notify-send|notify-receive|notify-ping|notify-echo PEER ADDRESS`, PEER as ``BusNotificationPeer/argument``):
/// - `notify-send` connects, prints "ready", then for each line "burst N" on stdin posts N
///   notifications and prints "done"; exits at the end of stdin.
/// - `notify-receive` observes bursts, prints "ready", then for each line "wait N" waits until N
///   notifications in all have been handled and prints "done" (the benchmark's receiving side as a
///   process of its own, to trace or profile beside a `notify-send`).
/// - `notify-ping` posts pings and observes the answers, prints "ready", then for each line
///   "rounds N" makes N round trips and prints "done" (the benchmark's pinging side as a process
///   of its own, beside a `notify-echo`).
/// - `notify-echo` observes pings and answers each with a pong, prints "ready" once observing, and
///   exits at the end of stdin.
/// Exits 2 with a message on stderr when something fails.
///
/// Thread-safety: call once, from the main thread.
public func runBusNotificationPeerProcess(role: String, peer argument: String, address: String) -> Never {
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("CrossProcessBenchPeer \(role) \(argument): \(message)\n".utf8))
        exit(2)
    }
    func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    guard let peer = BusNotificationPeer.named(argument) else { fail("unknown peer (dbus.ours, dbus.raw, redis.ours, redis.raw, redis.ours.bare, redis.raw.bare)") }
    do {
        switch role {
        case "notify-send":
            let side = try peer.connect(address, role: .sender)
            say("ready")
            while let line = readLine() {
                guard line.hasPrefix("burst "), let count = Int(line.dropFirst(6)) else { fail("bad command '\(line)'") }
                try side.postBurst(count)
                say("done")
            }
            side.close()
        case "notify-receive":
            let side = try peer.connect(address, role: .receiver)
            say("ready")
            while let line = readLine() {
                guard line.hasPrefix("wait "), let total = Int(line.dropFirst(5)) else { fail("bad command '\(line)'") }
                try side.waitForReceived(total)
                say("done")
            }
            side.close()
        case "notify-ping":
            let side = try peer.connect(address, role: .pinger)
            say("ready")
            var latencies = [Int64]()
            while let line = readLine() {
                guard line.hasPrefix("rounds "), let count = Int(line.dropFirst(7)), count > 0 else { fail("bad command '\(line)'") }
                latencies = Array(repeating: 0, count: count)
                try latencies.withUnsafeMutableBufferPointer { try side.roundTrips(count, latencies: $0.baseAddress!) }
                say("done")
            }
            side.close()
        case "notify-echo":
            let side = try peer.connect(address, role: .answerer)
            say("ready")
            // The answers are served on a thread of their own (the raw sides block in their read
            // loop); this thread waits for the end of stdin.
            let answering = Thread { try? side.serveAnswers() }
            answering.name = "answers"
            answering.start()
            while readLine() != nil {}
        default:
            fail("unknown role")
        }
    } catch {
        fail("\(error)")
    }
    exit(0)
}
