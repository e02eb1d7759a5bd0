#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopStressEngine

// portrunloop-stress: the reliability tool (stress, load and model runs).
//
//   portrunloop-stress [--seed N] [--producers N] [--items N] [--loops N] [--ports N] [--pipes N]
//                      [--duration S] [--round-timeout S] [--no-chaos] [--no-notifications]
//                      [--no-fds] [--no-timers] [--no-observers] [--quiet]
//   portrunloop-stress --load [--duration S] [--producers N] [--queue-limit N] [--max-growth-mb N]
//   portrunloop-stress --model [--cases N] [--seed N]
//
// Exits 0 when every check passed, 1 on any violation, 2 on a usage error. A hang aborts (134)
// with a diagnostic. The seed is printed first; PORTRUNLOOP_STRESS_SEED / PORTRUNLOOP_MODEL_SEED
// (or --seed) replay a run's choices.

let usage = """
usage: portrunloop-stress [options]            stress: N producers × M items to K loops, with chaos
       portrunloop-stress --load [options]     load: 8 producers → 1 loop at full speed; memory must stay bounded
       portrunloop-stress --model [options]    randomized model test (single-threaded, shrinks failures)
options:
  --seed N             seed (decimal or 0x hex); default: PORTRUNLOOP_STRESS_SEED / PORTRUNLOOP_MODEL_SEED, else random
  --producers N        producer threads (stress default 4, load default 8)
  --items N            operations per producer per round (default 2000)
  --loops N            consumer loops (default 3)
  --ports N            ports per consumer loop (default 2)
  --pipes N            watched pipes/socketpairs per consumer loop (default 2)
  --duration S         stress: keep running rounds for S seconds; load: run S seconds (default 30)
  --round-timeout S    a round taking longer is a hang: abort with a diagnostic (default 240)
  --no-chaos           no port invalidation, loop stop/restart or consumer thread exit
  --no-notifications   no notification posts / observers
  --no-fds             no fd sources (pipes written by the producers, cancelled while ready)
  --no-timers          no timers (one-shot and repeating, re-armed and invalidated from other threads)
  --no-observers       no run-loop observers or custom sources (signalled, invalidated and removed from other threads)
  --queue-limit N      load: the port's queue limit (default 5, Mach's default)
  --senders KIND       load: mixed (half try once, half wait 50 ms; default), zero (all try once), wait (all wait)
  --max-growth-mb N    load: fail if peak RSS grows more than N MiB over the start (default 64)
  --cases N            model: number of random cases (default 500)
  --quiet              stress: no per-round lines
"""

/// Allocates 4242 bytes and drops the only pointer, in a frame of its own so no live stack slot
/// still holds it when the leak checker scans at exit.
@inline(never) func leakOnPurpose() {
    let lost = UnsafeMutableRawPointer.allocate(byteCount: 4242, alignment: 16)
    lost.storeBytes(of: 42, as: UInt8.self)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("portrunloop-stress: \(message)\n\(usage)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var mode = "stress"
var options: [String: String] = [:]
var flags: Set<String> = []
let valued: Set<String> = ["--senders", "--seed", "--producers", "--items", "--loops", "--ports", "--pipes", "--duration", "--round-timeout",
                           "--queue-limit", "--max-growth-mb", "--cases"]
while let arg = arguments.first {
    arguments.removeFirst()
    switch arg {
    case "--help", "-h": FileHandle.standardOutput.write(Data((usage + "\n").utf8)); exit(0)
    case "--load": mode = "load"
    case "--self-test-leak":
        // For Scripts/stress-asan.sh and Scripts/leak-check.sh: leak 4242 bytes on purpose, to prove
        // the leak checkers (and their suppressions) still catch a leak of ours.
        leakOnPurpose()
        say("portrunloop-stress: leaked 4242 bytes on purpose")
        exit(0)
    case "--model": mode = "model"
    case "--no-chaos", "--no-notifications", "--no-fds", "--no-timers", "--no-observers", "--quiet": flags.insert(arg)
    case _ where valued.contains(arg):
        guard let value = arguments.first else { fail("\(arg) needs a value") }
        arguments.removeFirst()
        options[arg] = value
    default: fail("unknown argument '\(arg)'")
    }
}

@MainActor func int(_ name: String, _ fallback: Int) -> Int {
    guard let text = options[name] else { return fallback }
    guard let value = Int(text), value >= 0 else { fail("\(name) needs a non-negative integer, got '\(text)'") }
    return value
}

@MainActor func double(_ name: String) -> Double? {
    guard let text = options[name] else { return nil }
    guard let value = Double(text), value.isFinite, value >= 0 else { fail("\(name) needs a non-negative number of seconds, got '\(text)'") }
    return value
}

@MainActor func seed(environment: String) -> UInt64 {
    if let text = options["--seed"] {
        guard let value = StressConfiguration.parseSeed(text) else { fail("--seed needs a decimal or 0x-hex integer, got '\(text)'") }
        return value
    }
    return StressConfiguration.seedFromEnvironment(environment)
}

/// Unbuffered output, so progress lines show up at once in CI logs.
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

switch mode {
case "load":
    var load = LoadConfiguration()
    load.producers = int("--producers", 8)
    load.duration = double("--duration") ?? 30
    load.queueLimit = max(int("--queue-limit", 5), 1)
    load.maxGrowthMiB = int("--max-growth-mb", 64)
    if let text = options["--senders"] {
        guard let senders = LoadConfiguration.Senders(rawValue: text) else { fail("--senders must be mixed, zero or wait") }
        load.senders = senders
    }
    say("portrunloop-stress --load: \(load)")
    let report = LoadRun.run(load) { say($0) }
    say(report.description)
    exit(report.passed ? 0 : 1)

case "model":
    let base = seed(environment: "PORTRUNLOOP_MODEL_SEED")
    let cases = options["--cases"] == nil && ProcessInfo.processInfo.environment["PORTRUNLOOP_MODEL_SEED"] != nil && options["--seed"] == nil
        ? 1 : int("--cases", 500)
    say("portrunloop-stress --model: seed \(base), \(cases) case(s)")
    let start = Date()
    // With one case the seed is the case's own seed (what a failure prints); otherwise a base seed.
    let failure = cases == 1 ? ModelChecker.run(seed: base) : ModelChecker.run(cases: cases, baseSeed: base)
    if let failure {
        say(failure.description)
        exit(1)
    }
    say(String(format: "model test: %d case(s) passed in %.1fs (seed %llu)", cases, Date().timeIntervalSince(start), base))
    exit(0)

default:
    var config = StressConfiguration(seed: seed(environment: "PORTRUNLOOP_STRESS_SEED"))
    config.producers = int("--producers", config.producers)
    config.itemsPerProducer = int("--items", config.itemsPerProducer)
    config.loops = max(int("--loops", config.loops), 1)
    config.portsPerLoop = max(int("--ports", config.portsPerLoop), 1)
    config.duration = double("--duration")
    config.roundTimeout = double("--round-timeout") ?? config.roundTimeout
    config.chaos = !flags.contains("--no-chaos")
    config.notifications = !flags.contains("--no-notifications")
    config.fileDescriptors = !flags.contains("--no-fds")
    config.pipesPerLoop = int("--pipes", config.pipesPerLoop)
    config.timers = !flags.contains("--no-timers")
    config.observersAndSources = !flags.contains("--no-observers")
    guard (1...255).contains(config.producers) else { fail("--producers must be in 1...255") }
    say("portrunloop-stress: \(config)")
    let quiet = flags.contains("--quiet")
    let report = StressEngine.run(config) { line in if !quiet { say(line) } }
    say(report.description)
    exit(report.passed ? 0 : 1)
}
