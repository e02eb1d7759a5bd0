import Foundation
import PortRunLoopStressEngine

/// The process's resources, read from /proc.
enum ProcessFigures {
    /// Open descriptors (entries of /proc/self/fd, less the one listing them).
    static var descriptors: Int {
        guard let directory = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { count += 1 }
        }
        return count - 1
    }

    /// What the open descriptors are, counted by kind (`socket`, `pipe`, `anon_inode:[eventfd]`, a
    /// path's directory), for a report of what was left open.
    static var descriptorKinds: [String: Int] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return [:] }
        var kinds: [String: Int] = [:]
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name) else { continue }
            let kind = target.hasPrefix("/") ? (target as NSString).deletingLastPathComponent : String(target.prefix { $0 != ":" || target.hasPrefix("anon_inode") })
            kinds[kind.hasPrefix("anon_inode") ? target : kind, default: 0] += 1
        }
        return kinds
    }

    /// The kernel names of the process's threads, counted.
    static var threadNames: [String: Int] {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [:] }
        var names: [String: Int] = [:]
        for task in tasks {
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "?"
            names[name.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += 1
        }
        return names
    }

    /// Threads (`Threads:` of /proc/self/status).
    static var threads: Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst(8).trimmingCharacters(in: .whitespaces)) ?? -1
        }
        return -1
    }
}

/// One report line's figures.
struct SoakSample: Codable {
    var elapsed: Double
    var sent: Int
    var delivered: Int
    var lost: Int
    var violations: Int
    var drops: [String: Int]
    var rssKiB: Int
    var descriptors: Int
    var threads: Int
    /// Loops the soak made that are still alive.
    var loops: Int
    var restarts: [String: Int]
    /// Taken after the load stopped (the last line): left out of the slopes.
    var stopped = false

    init(elapsed: Double, ledger: SoakLedger) {
        let snapshot = ledger.snapshot
        self.elapsed = elapsed
        sent = snapshot.sent
        delivered = snapshot.delivered
        lost = snapshot.lost
        violations = snapshot.violations
        drops = snapshot.drops
        restarts = snapshot.restarts
        rssKiB = ProcessMemory.residentKiB
        descriptors = ProcessFigures.descriptors
        threads = ProcessFigures.threads
        loops = SoakLoops.alive.count
    }

    var line: String {
        func list(_ values: [String: Int]) -> String {
            values.isEmpty ? "none" : values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        return String(format: "soak %7.0fs  sent %d  delivered %d  lost %d  violations %d", elapsed, sent, delivered, lost, violations)
            + "  |  drops \(list(drops))  |  " + String(format: "rss %.1f MiB  fds %d  threads %d  loops %d", Double(rssKiB) / 1024, descriptors, threads, loops)
            + "  |  restarts \(list(restarts))" + (stopped ? "  (after the stop)" : "")
    }

    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// The end of a run: slopes, growth and the verdict.
struct SoakVerdict {
    var rssSlope: Double?
    var rssJudged = false
    var descriptorSlope: Double?
    var descriptorGrowth: Int?
    var teardownGrowth: Int
    var loopsAlive: [String]
    var failures: [String] = []

    /// Judges `samples` (the warm-up and the line after the stop left out) and the descriptors left
    /// after the teardown.
    init(samples: [SoakSample], options: SoakOptions, baselineDescriptors: Int, finalDescriptors: Int, ledger: SoakLedger) {
        let judged = samples.filter { $0.elapsed >= options.effectiveWarmUp && !$0.stopped }
        teardownGrowth = finalDescriptors - baselineDescriptors
        loopsAlive = SoakLoops.alive
        if !loopsAlive.isEmpty {
            failures.append("\(loopsAlive.count) loops were not freed after the teardown: \(loopsAlive.prefix(10).joined(separator: ", "))")
        }
        let last = samples.last
        if let last, last.lost > 0 { failures.append("\(last.lost) promised deliveries were lost") }
        if let last, last.violations > 0 { failures.append("\(last.violations) violations") }
        if teardownGrowth > options.maxDescriptorGrowth {
            failures.append("\(teardownGrowth) more descriptors open after the teardown than before the start (bound \(options.maxDescriptorGrowth))")
        }
        guard judged.count >= 3 else { return }
        let hours = judged.map { $0.elapsed / 3600 }
        rssSlope = Self.slope(hours, judged.map { Double($0.rssKiB) / 1024 })
        descriptorSlope = Self.slope(hours, judged.map { Double($0.descriptors) })
        // Descriptors go up and down with connections in flight: compare the lowest of the first
        // and of the last third of the judged samples.
        let third = max(1, judged.count / 3)
        let growth = judged.suffix(third).map(\.descriptors).min()! - judged.prefix(third).map(\.descriptors).min()!
        descriptorGrowth = growth
        if growth > options.maxDescriptorGrowth {
            failures.append("descriptors grew by \(growth) over the run (bound \(options.maxDescriptorGrowth))")
        }
        if let rssSlope {
            let window = hours.last! - hours.first!
            rssJudged = rssSlope * window > options.rssNoise
            if rssJudged && rssSlope > options.maxRSSSlope {
                failures.append(String(format: "RSS grew %.1f MiB/h over the run (bound %.1f)", rssSlope, options.maxRSSSlope))
            }
        }
    }

    /// The least-squares slope of `y` over `x`.
    static func slope(_ x: [Double], _ y: [Double]) -> Double? {
        let n = Double(x.count)
        let meanX = x.reduce(0, +) / n, meanY = y.reduce(0, +) / n
        let spread = x.reduce(0) { $0 + ($1 - meanX) * ($1 - meanX) }
        guard spread > 0 else { return nil }
        return zip(x, y).reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) } / spread
    }

    var lines: [String] {
        var lines: [String] = []
        func format(_ value: Double?, _ unit: String) -> String { value.map { String(format: "%+.2f ", $0) + unit } ?? "n/a (too few samples after the warm-up)" }
        lines.append("soak: RSS slope \(format(rssSlope, "MiB/h"))\(rssSlope != nil && !rssJudged ? " (below the noise bound: not judged)" : "")")
        lines.append("soak: descriptor slope \(format(descriptorSlope, "/h")), growth over the run \(descriptorGrowth.map { "\($0)" } ?? "n/a"), after the teardown \(teardownGrowth)")
        lines.append(failures.isEmpty ? "soak: PASS" : "soak: FAIL: " + failures.joined(separator: "; "))
        return lines
    }
}
