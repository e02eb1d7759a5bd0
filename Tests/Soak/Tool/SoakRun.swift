import Foundation
import PortRunLoopDaemons
import PortRunLoopKit
import PortRunLoopStressEngine

/// A whole soak run: starts the loads, supervises and reports until the duration passed (or
/// SIGINT/SIGTERM came), stops them, tears everything down and judges.
///
/// Bounded: a watchdog ends the process (status 3) if the run is not over 5 minutes after its
/// duration, or 3 minutes after a stop began; every child started (the daemons, the peer) is
/// started from the main thread through ``SupervisedExec``, so it dies with the soak however the
/// soak ends.
///
/// Thread-safety: the main thread.
enum SoakRun {
    /// This program's path (to start the peer and the launcher).
    static var executablePath: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return count > 0 ? String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }

    static func run(_ options: SoakOptions) -> Int32 {
        let interrupted = SignalWatch.start()
        startProcessWideHelpers()
        let baselineDescriptors = ProcessFigures.descriptors
        let ledger = SoakLedger()
        Watchdog.arm(seconds: options.duration + 300, ledger: ledger)
        say("soak: \(String(format: "%.0f", options.duration)) s, a report every \(String(format: "%g", options.reportInterval)) s, warm-up \(String(format: "%.0f", options.effectiveWarmUp)) s; pid \(getpid())")
        // Every object of the run is released when this returns: what stays open after it is a leak.
        let samples = runLoads(options, ledger: ledger, interrupted: interrupted)
        // Threads that exit release their descriptors as they go: give the last ones a moment.
        waitUntil(seconds: 5) { ProcessFigures.descriptors <= baselineDescriptors + options.maxDescriptorGrowth }
        let finalDescriptors = ProcessFigures.descriptors
        let verdict = SoakVerdict(samples: samples, options: options, baselineDescriptors: baselineDescriptors,
                                  finalDescriptors: finalDescriptors, ledger: ledger)
        say("soak: descriptors before the start \(baselineDescriptors), after the teardown \(finalDescriptors) ("
            + ProcessFigures.descriptorKinds.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }.joined(separator: ", ")
            + "); threads now: " + ProcessFigures.threadNames.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }.joined(separator: ", "))
        for line in verdict.lines { say(line) }
        if options.json {
            let summary: [String: Any] = ["pass": verdict.failures.isEmpty, "failures": verdict.failures,
                                          "rss_slope_mib_per_hour": verdict.rssSlope ?? NSNull(),
                                          "descriptor_slope_per_hour": verdict.descriptorSlope ?? NSNull(),
                                          "descriptor_growth": verdict.descriptorGrowth ?? NSNull(),
                                          "teardown_descriptor_growth": verdict.teardownGrowth]
            if let data = try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys]) {
                say("JSON " + String(decoding: data, as: UTF8.self))
            }
        }
        Watchdog.disarm()
        if !verdict.failures.isEmpty { return 1 }
        return interrupted.signal == nil ? 0 : 130
    }

    /// Starts what lives as long as the process once something used it, so that the descriptors
    /// counted before the start already include it: the main thread's loop. The library's reader
    /// thread for async cross-process requests (one loop, five descriptors) is started by the
    /// first such request and is within the bound.
    private static func startProcessWideHelpers() {
        _ = PortRunLoop.current
    }

    /// Starts the loads, supervises and reports until the duration passed or the stop flag was
    /// raised, stops and tears them down; the report samples.
    private static func runLoads(_ options: SoakOptions, ledger: SoakLedger, interrupted: SignalWatch) -> [SoakSample] {
        let stop = interrupted.flag
        let launcher = [executablePath, "--die-with-parent", "\(getpid())"]
        let hubs: SoakHubs
        do { hubs = try SoakHubs(count: 3) } catch {
            ledger.violation("could not start the hub threads: \(error)")
            return [SoakSample(elapsed: 0, ledger: ledger)]
        }
        var loads: [any SoakLoad] = [
            LocalPortsLoad(hubs: hubs, ledger: ledger, rate: options.rate),
            TimerLoad(hubs: hubs, ledger: ledger, rate: options.rate),
            PipeLoad(hubs: hubs, ledger: ledger, rate: options.rate),
            StreamLoad(ledger: ledger, rate: options.rate),
            NotificationLoad(hubs: hubs, ledger: ledger, rate: options.rate, churn: options.observerChurn),
        ]
        if options.crossProcess {
            do {
                loads.append(try CrossProcessLoad(ledger: ledger, rate: options.rate, restartEvery: options.peerRestart, launcher: launcher))
            } catch { ledger.violation("cross-process: \(error)") }
        }
        if options.dbus { loads.append(DBusLoad(hubs: hubs, ledger: ledger, rate: options.rate, launcher: launcher)) }
        if options.redis {
            loads.append(RedisLoad(hubs: hubs, ledger: ledger, rate: options.rate, restartEvery: options.redisRestart, launcher: launcher))
        }

        var started: [any SoakLoad] = []
        for load in loads {
            started.append(load) // a load that fails to start still stops and tears down what it did start
            do { try load.start() } catch {
                ledger.violation("\(load.name) could not start: \(error)")
                stop.raise()
                break
            }
        }

        var samples: [SoakSample] = []
        let begin = ContinuousClock.now
        var nextReport = options.reportInterval
        func elapsed() -> Double { (ContinuousClock.now - begin).seconds }
        func sample(stopped: Bool = false) {
            for load in started { load.report() }
            var figures = SoakSample(elapsed: elapsed(), ledger: ledger)
            figures.stopped = stopped
            samples.append(figures)
            say(figures.line)
            if options.json { say("JSON " + figures.json) }
        }
        while !stop.isRaised && elapsed() < options.duration {
            for load in started { load.supervise(elapsed: elapsed()) }
            if elapsed() >= nextReport {
                sample()
                nextReport += options.reportInterval
            }
            usleep(100_000)
        }
        if let signal = interrupted.signal { say("soak: stopping on signal \(signal)") }

        Watchdog.arm(seconds: 180, ledger: ledger)
        say("soak: stopping the load")
        for load in started.reversed() { load.stop() }
        sample(stopped: true)
        for load in started.reversed() { load.tearDown() }
        hubs.stop()
        if let redis = started.compactMap({ $0 as? RedisLoad }).first { say("soak: redis transport: \(redis.metricsSummary)") }
        return samples
    }

    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
