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
    /// Prints "ready", then runs `body` with N for each line "<command>N" (N > 0) and prints
    /// "done"; closes the side at the end of stdin.
    func serve(_ side: any BusNotificationSide, command: String, _ body: (any BusNotificationSide, Int) throws -> Void) throws {
        say("ready")
        while let line = readLine() {
            guard line.hasPrefix(command), let count = Int(line.dropFirst(command.count)), count > 0 else { fail("bad command '\(line)'") }
            try body(side, count)
            say("done")
        }
        side.close()
    }
    guard let peer = BusNotificationPeer.named(argument) else { fail("unknown peer (one of: \(BusNotificationPeer.all.map(\.argument).joined(separator: ", ")))") }
    do {
        switch role {
        case "notify-send":
            try serve(peer.connect(address, role: .sender), command: "burst ") { side, count in try side.postBurst(count) }
        case "notify-receive":
            try serve(peer.connect(address, role: .receiver), command: "wait ") { side, total in try side.waitForReceived(total) }
        case "notify-ping":
            try serve(peer.connect(address, role: .pinger), command: "rounds ") { side, count in
                var latencies = [Int64](repeating: 0, count: count)
                try latencies.withUnsafeMutableBufferPointer { try side.roundTrips(count, latencies: $0.baseAddress!) }
            }
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
