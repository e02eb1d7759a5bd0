import Foundation
import PortRunLoopDBus
import PortRunLoopKit

// Distributed notifications over D-Bus, between two processes of this program: a private
// dbus-daemon, dbus-monitor watching the notification signals, a second process of the demo
// (`--bus-child`) posting pings from two threads, this process observing them on a named
// RunLoopThread and answering each with a post that the second process observes on its own named
// thread.

private extension Notification.Name {
    static let busPing = Notification.Name("org.portrunloop.demo.ping")
    static let busPong = Notification.Name("org.portrunloop.demo.pong")
    static let busDone = Notification.Name("org.portrunloop.demo.done")
}

/// What one observation saw: count, order per poster, handling threads, latencies. Written only on
/// its observation's thread; read there through `performAndWait`, which orders the reads after the
/// writes.
private final class BusTally: @unchecked Sendable {
    var count = 0
    var nextSeq: [Int]
    var outOfOrder = 0
    var malformed = 0
    var threads: [String: Int] = [:]
    /// ns from `stampKey`'s time to the handler.
    var latencies: [UInt64] = []
    /// ns from the ping's post to this handler (the answer side only: a full round trip).
    var roundTrips: [UInt64] = []
    /// The same two for the paced pings (the last poster index: one at a time, after the burst).
    var pacedLatencies: [UInt64] = []
    var pacedRoundTrips: [UInt64] = []
    let pacedPoster: Int

    /// `posters` posting threads in the burst, plus the paced poster (index `posters`).
    init(posters: Int, total: Int) {
        nextSeq = Array(repeating: 0, count: posters + 1)
        pacedPoster = posters
        latencies.reserveCapacity(total)
    }

    /// Records `note`; returns its poster, seq and post time, or nil if it is not one of ours.
    func record(_ note: Notification, stampKey: String) -> (poster: Int, seq: Int, at: Int)? {
        let now = monotonicNanoseconds()
        threads[Thread.current.name ?? "?", default: 0] += 1
        guard let info = note.userInfo, let poster = info["poster"] as? Int, let seq = info["seq"] as? Int,
              let at = info["at"] as? Int, let stamp = info[stampKey] as? Int, poster >= 0, poster < nextSeq.count else {
            malformed += 1
            return nil
        }
        count += 1
        if seq != nextSeq[poster] { outOfOrder += 1 }
        nextSeq[poster] = seq + 1
        let paced = poster == pacedPoster
        if paced { pacedLatencies.append(now &- UInt64(stamp)) } else { latencies.append(now &- UInt64(stamp)) }
        if stampKey != "at" {
            if paced { pacedRoundTrips.append(now &- UInt64(at)) } else { roundTrips.append(now &- UInt64(at)) }
        }
        return (poster, seq, at)
    }

    var threadList: String { threads.sorted { $0.key < $1.key }.map { "'\($0.key)' x\($0.value)" }.joined(separator: ", ") }
}

/// Runs the D-Bus scenario and prints the evidence; returns false if any check fails (a missing
/// `dbus-daemon` included).
func runBusScenario(posterThreads: Int, itemsPerThread: Int, pacedRoundTrips: Int) -> Bool {
    let burst = posterThreads * itemsPerThread
    let total = burst + pacedRoundTrips
    print("== Scenario 4: distributed notifications over D-Bus (two processes, a private dbus-daemon) ==")
    func failed(_ reason: String) -> Bool {
        print("  result: FAILED — \(reason)")
        return false
    }
    guard let daemonPath = DemoChildProcess.find("dbus-daemon"), let monitorPath = DemoChildProcess.find("dbus-monitor") else {
        return failed("dbus-daemon or dbus-monitor is not installed (Scripts/install-deps.sh installs the 'dbus' package; or run with --no-bus)")
    }
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("portrunloop-demo-bus-\(getpid())-\(UInt32.random(in: 0 ... .max))").path
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    } catch {
        return failed("cannot create \(directory): \(error)")
    }
    defer { try? FileManager.default.removeItem(atPath: directory) }

    // The private bus, bounded: its address within 5 s, stopped at the end.
    let daemon: DemoChildProcess
    do {
        daemon = try DemoChildProcess(daemonPath, ["--session", "--nofork", "--nopidfile", "--print-address=1",
                                                   "--address=unix:path=\(directory)/bus"], label: "dbus-daemon")
    } catch {
        return failed("cannot start \(daemonPath): \(error)")
    }
    defer { daemon.stop() }
    guard let address = daemon.readLine(timeout: 5), address.hasPrefix("unix:") else {
        return failed("dbus-daemon printed no address within 5 s")
    }
    print("  private bus: \(address) (dbus-daemon pid \(daemon.pid))")

    // dbus-monitor: a monitor once the daemon took its name away (its NameLost line).
    let monitor: DemoChildProcess
    do {
        monitor = try DemoChildProcess(monitorPath, ["--address", address,
                                                     "type='signal',interface='org.portrunloop.DistributedNotification'"],
                                       label: "dbus-monitor")
    } catch {
        return failed("cannot start \(monitorPath): \(error)")
    }
    defer { monitor.stop() }
    var monitorReady = false
    while let line = monitor.readLine(timeout: 5) {
        if line.contains("member=NameLost") { monitorReady = true; break }
    }
    guard monitorReady else { return failed("dbus-monitor did not become a monitor within 5 s") }

    let connection: RunLoopThread, observer: RunLoopThread
    let center: BusNotificationCenter
    do {
        connection = try RunLoopThread(name: "bus-connection")
        observer = try RunLoopThread(name: "parent-observer")
        center = try BusNotificationCenter(endpoint: .dbus(address: address), loop: connection.loop)
    } catch {
        return failed("cannot connect: \(error)")
    }
    defer {
        center.close()
        observer.stop()
        connection.stop()
    }
    let tally = BusTally(posters: posterThreads, total: total)
    let allPings = DispatchSemaphore(value: 0)
    let answerErrors = LockedCounter()
    let observation: BusObservation
    do {
        observation = try center.addObserver(forName: .busPing, on: observer.loop) { note in
            guard let ping = tally.record(note, stampKey: "at") else { return }
            // The answer, posted from this thread: one thread's posts keep their order. It goes out
            // as typed fields (no dictionary built here); the other process reads the same signal
            // into a userInfo dictionary.
            do {
                try center.post(name: .busPong, fields: ["poster": .int(ping.poster), "seq": .int(ping.seq), "at": .int(ping.at),
                                                         "answeredAt": .int(Int(monotonicNanoseconds()))])
            } catch {
                answerErrors.add()
            }
            if tally.count == total { allPings.signal() }
        }
    } catch {
        return failed("addObserver: \(error)")
    }
    defer { observation.remove() }
    print("  this process (pid \(getpid())): center on '\(connection.name)', observing pings on '\(observer.name)'; "
        + "dbus-monitor pid \(monitor.pid)")

    let started = Date()
    let child: DemoChildProcess
    do {
        child = try DemoChildProcess(DemoChildProcess.ownExecutable,
                                     ["--bus-child", address, "\(posterThreads)", "\(itemsPerThread)", "\(pacedRoundTrips)"],
                                     label: "demo --bus-child", keepStderr: true)
    } catch {
        return failed("cannot start the second process: \(error)")
    }
    defer { child.stop() }
    let report = child.remainingLines(timeout: 30)
    let childStatus = child.waitForExit(timeout: 5)
    let pingsDone = allPings.wait(timeout: .now() + 10) == .success
    let elapsed = Date().timeIntervalSince(started)

    // The end marker: once dbus-monitor prints it, it has printed every signal before it.
    try? center.post(name: .busDone)
    var monitored: [String: Int] = [:]
    var sampleLine: String?
    var sawDone = false
    var pendingHeader: String?
    while !sawDone, let line = monitor.readLine(timeout: 5) {
        if line.contains("interface=org.portrunloop.DistributedNotification; member=Posted") {
            pendingHeader = line
        } else if let header = pendingHeader, line.hasPrefix("   string \"") {
            let name = String(line.dropFirst(11).dropLast())
            if name == Notification.Name.busDone.rawValue { sawDone = true } else { monitored[name, default: 0] += 1 }
            if sampleLine == nil { sampleLine = header + "\n      " + line.trimmingCharacters(in: .whitespaces) }
            pendingHeader = nil
        }
    }

    let snapshot = try? observer.loop.performAndWait { () -> (Int, Int, Int, String, [UInt64], [UInt64]) in
        (tally.count, tally.outOfOrder, tally.malformed, tally.threadList, tally.latencies, tally.pacedLatencies)
    }
    guard let snapshot else { return failed("the observer thread is gone") }
    let (pings, outOfOrder, malformed, threads, latencies, pacedLatencies) = snapshot
    let (latency, pacedLatency) = (LatencySummary(latencies), LatencySummary(pacedLatencies))
    print("  second process (pid \(child.pid), '--bus-child'), its own account:")
    for line in report { print("    \(line)") }
    print("  pings handled here: \(pings)/\(total)\(pingsDone ? "" : " (TIMED OUT)") on \(threads); "
        + "in order per poster: \(outOfOrder == 0 ? "yes" : "NO (\(outOfOrder) out of order)"); malformed \(malformed)")
    print("  latency ping post→handled here: one at a time p50 \(LatencySummary.format(pacedLatency.percentile(50))), "
        + "p99 \(LatencySummary.format(pacedLatency.percentile(99))); in the burst of \(burst) (queueing included) "
        + "p50 \(LatencySummary.format(latency.percentile(50))), p99 \(LatencySummary.format(latency.percentile(99)))")
    print("  answers posted (as typed BusFields; read there as a userInfo dictionary): \(pings - answerErrors.value) (failed: \(answerErrors.value))")
    let seenPings = monitored[Notification.Name.busPing.rawValue] ?? 0, seenPongs = monitored[Notification.Name.busPong.rawValue] ?? 0
    print("  dbus-monitor printed \(seenPings + seenPongs) of our signals (\(seenPings) pings, \(seenPongs) answers)\(sawDone ? "" : " (end marker not seen within 5 s)"); one of them:")
    if let sampleLine { print("    \(sampleLine)") }
    print(String(format: "  wall time: %.3f s for %d notifications each way (%d in a burst from %d threads, %d one at a time; process start included)",
                 elapsed, total, burst, posterThreads, pacedRoundTrips))

    var failures: [String] = []
    if childStatus != 0 { failures.append("the second process failed (exit status \(childStatus.map(String.init) ?? "none: stopped"))") }
    if pings != total { failures.append("\(pings) of \(total) pings handled") }
    if outOfOrder != 0 || malformed != 0 { failures.append("\(outOfOrder) pings out of order, \(malformed) malformed") }
    if threads != "'\(observer.name)' x\(total)" { failures.append("pings handled on \(threads)") }
    if answerErrors.value != 0 { failures.append("\(answerErrors.value) answers failed to post") }
    if !sawDone || seenPings != total || seenPongs != total { failures.append("dbus-monitor saw \(seenPings) pings and \(seenPongs) answers") }
    if !failures.isEmpty { return failed(failures.joined(separator: "; ")) }
    print("  result: OK — \(total) notifications each way between two processes, each handled once, in order per poster, on the named threads")
    return true
}

/// The second process (`portrunloop-demo --bus-child ADDRESS THREADS ITEMS PACED`): posts ITEMS
/// pings from each of THREADS threads at once, observes the answers on 'child-observer', then makes
/// PACED round trips one at a time (the next ping once the last answer is handled); prints its
/// account and exits 0 if every answer came, in order, on that thread (1 otherwise, 2 on bad
/// arguments; at most 30 s).
func runBusChild(_ arguments: [String]) -> Never {
    guard arguments.count == 4, let threads = Int(arguments[1]), let items = Int(arguments[2]), let paced = Int(arguments[3]),
          threads > 0, items > 0, paced >= 0 else {
        FileHandle.standardError.write(Data("portrunloop-demo: --bus-child ADDRESS THREADS ITEMS PACED\n".utf8))
        exit(2)
    }
    let burst = threads * items
    let total = burst + paced
    let connection: RunLoopThread, observer: RunLoopThread
    let center: BusNotificationCenter
    let tally = BusTally(posters: threads, total: total)
    let allAnswers = DispatchSemaphore(value: 0)
    let pacedAnswer = DispatchSemaphore(value: 0)
    let observation: BusObservation
    do {
        connection = try RunLoopThread(name: "bus-connection")
        observer = try RunLoopThread(name: "child-observer")
        center = try BusNotificationCenter(endpoint: .dbus(address: arguments[0]), loop: connection.loop)
        observation = try center.addObserver(forName: .busPong, on: observer.loop) { note in
            let answer = tally.record(note, stampKey: "answeredAt")
            if answer?.poster == tally.pacedPoster { pacedAnswer.signal() }
            if tally.count == burst { allAnswers.signal() }
        }
    } catch {
        FileHandle.standardError.write(Data("portrunloop-demo (second process): \(error)\n".utf8))
        exit(1)
    }
    let postErrors = LockedCounter()
    for poster in 0..<threads {
        let thread = Thread {
            for seq in 0..<items {
                do {
                    try center.post(name: .busPing, userInfo: ["poster": poster, "seq": seq, "at": Int(monotonicNanoseconds())])
                } catch {
                    postErrors.add()
                }
            }
        }
        thread.name = "child-poster-\(poster)"
        thread.start()
    }
    var finished = allAnswers.wait(timeout: .now() + 20) == .success
    // One at a time: this thread posts the next ping once the last answer was handled.
    for seq in 0..<paced where finished {
        do {
            try center.post(name: .busPing, userInfo: ["poster": tally.pacedPoster, "seq": seq, "at": Int(monotonicNanoseconds())])
        } catch {
            postErrors.add()
        }
        finished = pacedAnswer.wait(timeout: .now() + 5) == .success
    }
    let snapshot = try? observer.loop.performAndWait { () -> (Int, Int, Int, String, [UInt64], [UInt64], [UInt64]) in
        (tally.count, tally.outOfOrder, tally.malformed, tally.threadList, tally.latencies, tally.roundTrips, tally.pacedRoundTrips)
    }
    observation.remove()
    center.close()
    guard let snapshot else { exit(1) }
    let (answers, outOfOrder, malformed, names, oneWay, roundTrips, pacedRoundTrips) = snapshot
    let (answer, roundTrip, pacedRoundTrip) = (LatencySummary(oneWay), LatencySummary(roundTrips), LatencySummary(pacedRoundTrips))
    let posters = (0..<threads).map { "'child-poster-\($0)'" }.joined(separator: ", ")
    print("posted \(total - postErrors.value) pings: \(burst) at once from \(posters), then \(paced) one at a time from the main thread "
        + "(failed: \(postErrors.value))")
    print("answers handled: \(answers)/\(total)\(finished ? "" : " (TIMED OUT)") on \(names); "
        + "in order per poster: \(outOfOrder == 0 ? "yes" : "NO (\(outOfOrder) out of order)"); malformed \(malformed)")
    print("round trip ping post→answer handled, one at a time: p50 \(LatencySummary.format(pacedRoundTrip.percentile(50))), "
        + "p99 \(LatencySummary.format(pacedRoundTrip.percentile(99))); in the burst (queueing included): "
        + "p50 \(LatencySummary.format(roundTrip.percentile(50))), p99 \(LatencySummary.format(roundTrip.percentile(99)))")
    print("latency answer post→handled here, in the burst: p50 \(LatencySummary.format(answer.percentile(50))), "
        + "p99 \(LatencySummary.format(answer.percentile(99)))")
    let ok = finished && answers == total && outOfOrder == 0 && malformed == 0 && postErrors.value == 0
        && names == "'\(observer.name)' x\(total)"
    exit(ok ? 0 : 1)
}

/// A counter any thread can bump.
private final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()  // guards `count`
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
