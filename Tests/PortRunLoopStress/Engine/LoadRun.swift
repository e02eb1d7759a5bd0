import Foundation
import PortRunLoopKit
import Synchronization

/// The load test: one loop receiving from many producer threads at full speed.
///
/// Thread-safety: a value type; `Sendable`.
public struct LoadConfiguration: Sendable, CustomStringConvertible {
    /// How producers send when the queue is full: `mixed` (half try once, half wait up to 50 ms),
    /// `zeroTimeout` (all try once and retry at once), `waiting` (all wait up to 50 ms).
    /// Thread-safety: a field of a value type (`Sendable`).
    public enum Senders: String, Sendable { case mixed, zeroTimeout = "zero", waiting = "wait" }

    /// Producer threads.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var producers = 8
    /// How they send.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var senders = Senders.mixed
    /// Seconds of full-speed sending.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var duration: Double = 30
    /// The receiving port's queue limit.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var queueLimit = MessagePort.defaultQueueLimit
    /// The run fails if peak RSS exceeds the starting RSS by more than this.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var maxGrowthMiB = 64

    /// Thread-safety: a value type.
    public init() {}

    /// Thread-safety: a value type.
    public var description: String {
        "producers=\(producers) senders=\(senders.rawValue) duration=\(duration)s queueLimit=\(queueLimit) maxGrowth=\(maxGrowthMiB)MiB"
    }
}

/// What a load run measured.
///
/// Thread-safety: a value type; `Sendable`.
public struct LoadReport: Sendable, CustomStringConvertible {
    /// The configuration that ran.
    ///
    /// Thread-safety: a field of a value type (`Sendable`).
    public var configuration: LoadConfiguration
    /// Seconds the producers sent.
    ///
    /// Thread-safety: a field of a value type (`Sendable`).
    public var elapsed: Double = 0
    /// Sends accepted, rejected at once (zero timeout, queue full), rejected after waiting 50 ms.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var accepted = 0, rejectedAtOnce = 0, rejectedAfterWait = 0
    /// Messages delivered to the handler, and discarded.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var delivered = 0, discarded = 0
    /// `performAndWait` round trips made by the producers meanwhile.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var synchronousCalls = 0
    /// Messages that arrived out of their producer's order, or twice, or after a gap.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var orderViolations = 0
    /// Resident memory: at start, at the end, peak (VmHWM), and the largest sample.
    /// Thread-safety: a field of a value type (`Sendable`).
    public var rssStartKiB = 0, rssEndKiB = 0, peakRSSKiB = 0, maxSampleKiB = 0
    /// Every broken check, described.
    ///
    /// Thread-safety: a field of a value type (`Sendable`).
    public var violations: [String] = []

    /// True when no check failed.
    ///
    /// Thread-safety: a field of a value type (`Sendable`).
    public var passed: Bool { violations.isEmpty }

    public var description: String {
        let growth = Double(peakRSSKiB - rssStartKiB) / 1024
        return [
            "load: \(configuration)",
            String(format: "elapsed %.1fs; sends accepted %d (%.0f/s), rejected at once %d, rejected after waiting %d",
                   elapsed, accepted, Double(accepted) / max(elapsed, 0.001), rejectedAtOnce, rejectedAfterWait),
            "delivered \(delivered), discarded \(discarded), lost \(accepted - delivered - discarded), order violations \(orderViolations), performAndWait round trips \(synchronousCalls)",
            String(format: "RSS: start %.1f MiB, end %.1f MiB, peak (VmHWM) %.1f MiB, growth %.1f MiB (limit %d MiB)",
                   Double(rssStartKiB) / 1024, Double(rssEndKiB) / 1024, Double(peakRSSKiB) / 1024, growth, configuration.maxGrowthMiB),
            passed ? "RESULT: PASS" : "RESULT: FAIL\n" + violations.map { "  - \($0)" }.joined(separator: "\n"),
        ].joined(separator: "\n")
    }
}

/// Runs the load test.
///
/// Thread-safety: any thread without a loop of its own.
public enum LoadRun {
    /// Thread-safety: any thread.
    public static func run(_ config: LoadConfiguration, progress: ((String) -> Void)? = nil) -> LoadReport {
        var report = LoadReport(configuration: config)
        report.rssStartKiB = ProcessMemory.residentKiB
        let sink: RunLoopThread
        do { sink = try RunLoopThread(name: "load-sink") } catch {
            report.violations.append("could not start the receiving thread: \(error)")
            return report
        }
        let producers = config.producers
        let port = MessagePort(queueLimit: config.queueLimit)
        /// What the sink's handler keeps.
        ///
        /// Thread-safety: `@unchecked Sendable`: `expected` is confined to the sink's thread (only
        /// the port's handler, which runs there, touches it); the counts are atomics, so the
        /// sampler reads them from its own thread.
        final class SinkState: @unchecked Sendable {
            var expected: [UInt32]
            let delivered = Atomic<Int>(0)
            let outOfOrder = Atomic<Int>(0)
            init(producers: Int) { expected = Array(repeating: 0, count: producers) }
        }
        let state = SinkState(producers: producers)
        port.setHandler { message in
            let p = Int(message.msgid >> 24)
            let seq = message.msgid & 0xFF_FFFF
            if p < state.expected.count, seq == state.expected[p] {
                state.expected[p] = (seq + 1) & 0xFF_FFFF
            } else {
                state.outOfOrder.add(1, ordering: .relaxed)
                if p < state.expected.count { state.expected[p] = (seq + 1) & 0xFF_FFFF }
            }
            state.delivered.add(1, ordering: .relaxed)
        }
        sink.loop.add(port, forMode: .common)
        _ = try? sink.loop.performAndWait {}

        struct Counts: Sendable { var accepted = 0, rejectedAtOnce = 0, rejectedAfterWait = 0, calls = 0 }
        let results = Locked<[Counts]>(Array(repeating: Counts(), count: producers))
        let stop = Atomic<Bool>(false)
        let start = Date()
        let loop = sink.loop
        let threads = (0..<producers).map { p in
            JoinableThread(name: "load-p\(p)") {
                var counts = Counts()
                var seq: UInt32 = 0
                let waits: Bool
                switch config.senders {
                case .mixed: waits = p % 2 == 1
                case .zeroTimeout: waits = false
                case .waiting: waits = true
                }
                var iteration = 0
                while !stop.load(ordering: .relaxed) {
                    iteration += 1
                    let date = waits ? Date(timeIntervalSinceNow: 0.05) : Date.distantPast
                    if port.send(before: date, msgid: UInt32(p) << 24 | seq) {
                        counts.accepted += 1
                        seq = (seq + 1) & 0xFF_FFFF
                    } else if waits {
                        counts.rejectedAfterWait += 1
                    } else {
                        counts.rejectedAtOnce += 1
                    }
                    if iteration % 4096 == 0, (try? loop.performAndWait { () }) != nil { counts.calls += 1 }
                }
                results.withLock { $0[p] = counts }
            }
        }
        // Sample memory while the producers run (sleeping here only paces the sampling).
        var nextReport = 5.0
        while Date().timeIntervalSince(start) < config.duration {
            Thread.sleep(forTimeInterval: 0.1)
            report.maxSampleKiB = max(report.maxSampleKiB, ProcessMemory.residentKiB)
            let t = Date().timeIntervalSince(start)
            if t >= nextReport {
                nextReport += 5
                progress?(String(format: "  t=%4.1fs delivered %d, RSS %.1f MiB", t, state.delivered.load(ordering: .relaxed),
                                 Double(ProcessMemory.residentKiB) / 1024))
            }
        }
        stop.store(true, ordering: .relaxed)
        for (p, thread) in threads.enumerated() where !thread.join(timeout: 30) {
            report.violations.append("producer \(p) did not stop within 30 s (hang)")
        }
        report.elapsed = Date().timeIntervalSince(start)
        // Everything accepted is delivered before these calls return (ports before later blocks).
        _ = try? loop.performAndWait {}
        _ = try? loop.performAndWait {}
        for c in results.snapshot {
            report.accepted += c.accepted
            report.rejectedAtOnce += c.rejectedAtOnce
            report.rejectedAfterWait += c.rejectedAfterWait
            report.synchronousCalls += c.calls
        }
        report.delivered = state.delivered.load(ordering: .acquiring)
        report.orderViolations = state.outOfOrder.load(ordering: .acquiring)
        let stats = port.statistics
        report.discarded = stats.discarded
        sink.stop()
        report.rssEndKiB = ProcessMemory.residentKiB
        report.peakRSSKiB = ProcessMemory.peakResidentKiB
        if report.delivered != report.accepted {
            report.violations.append("accepted \(report.accepted) messages but delivered \(report.delivered)")
        }
        if stats.sent != report.accepted || stats.rejected != report.rejectedAtOnce + report.rejectedAfterWait {
            report.violations.append("port statistics \(stats) disagree with the producers' counts")
        }
        if report.orderViolations > 0 { report.violations.append("\(report.orderViolations) messages out of order, duplicated or after a gap") }
        let growthKiB = max(report.peakRSSKiB, report.maxSampleKiB) - report.rssStartKiB
        if growthKiB > config.maxGrowthMiB * 1024 {
            report.violations.append("peak RSS grew by \(growthKiB / 1024) MiB, more than \(config.maxGrowthMiB) MiB: memory is not bounded")
        }
        return report
    }
}
