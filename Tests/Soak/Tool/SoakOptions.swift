import Foundation

/// The soak's command line.
struct SoakOptions {
    /// How long the load runs (the teardown comes after).
    var duration: Double = 60
    /// Seconds between report lines.
    var reportInterval: Double = 60
    /// Samples before this many seconds are left out of the slopes (allocator and cache warm-up).
    var warmUp: Double?
    /// Also print every report line as a JSON object.
    var json = false
    /// The largest RSS slope (MiB per hour, after the warm-up) that passes.
    var maxRSSSlope: Double = 16
    /// A slope is judged only when the growth it implies over the judged window is above this
    /// (MiB): below it, a short run's slope is the allocator's noise, not a trend.
    var rssNoise: Double = 4
    /// The most descriptors the process may have gained, over the run and after the teardown.
    var maxDescriptorGrowth = 16
    /// Seconds between kills of the peer process (0: never).
    var peerRestart: Double = 20
    /// Seconds between kills of the Redis server (0: never).
    var redisRestart: Double = 30
    /// Seconds between observer threads started (each lives about 2.5 of these).
    var observerChurn: Double = 2
    /// A factor on every rate (1: about 3,000 checked messages a second in all).
    var rate: Double = 1
    var dbus = true
    var redis = true
    var crossProcess = true

    /// The warm-up in effect: given, or a fifth of the run (at most 5 minutes).
    var effectiveWarmUp: Double { warmUp ?? min(duration / 5, 300) }

    static let usage = """
    usage: portrunloop-soak [options]
      runs every feature of the package at once, checks every delivery the documentation promises,
      and prints one line per interval; exits 1 if anything was lost, if descriptors grew, or if
      resident memory kept growing.
    options:
      --duration D                     how long to run: seconds, or with a unit (90s, 30m, 2h); default 60
      --report-interval D              time between report lines (default 60s)
      --warm-up D                      left out of the slopes (default: a fifth of the run, at most 5m)
      --json                           also print each report line as a JSON object (prefix "JSON ")
      --max-rss-slope-mb-per-hour N    the RSS slope that fails the run (default 16)
      --rss-noise-mb N                 a slope is judged only if it implies more growth than this (default 4)
      --max-fd-growth N                descriptors the run may gain (default 16)
      --peer-restart D                 kill and restart the peer process this often (default 20s; 0: never)
      --redis-restart D                kill -9 and restart redis-server this often (default 30s; 0: never)
      --observer-churn D               start an observer thread this often (default 2s)
      --rate F                         scale every rate by F (default 1)
      --no-dbus, --no-redis, --no-cross-process
                                       leave that part out
    """

    /// Parses `arguments` (without the program name), or says what is wrong with them.
    static func parse(_ arguments: [String]) -> Result<SoakOptions, SoakUsageError> {
        var options = SoakOptions()
        var rest = arguments[...]
        func value(_ flag: String) throws(SoakUsageError) -> String {
            guard let value = rest.popFirst() else { throw SoakUsageError("\(flag) needs a value") }
            return value
        }
        func duration(_ flag: String) throws(SoakUsageError) -> Double {
            let text = try value(flag)
            guard let seconds = parseDuration(text), seconds >= 0 else { throw SoakUsageError("\(flag): '\(text)' is not a duration") }
            return seconds
        }
        func number(_ flag: String) throws(SoakUsageError) -> Double {
            let text = try value(flag)
            guard let number = Double(text), number.isFinite, number >= 0 else { throw SoakUsageError("\(flag): '\(text)' is not a number") }
            return number
        }
        do throws(SoakUsageError) {
            while let flag = rest.popFirst() {
                switch flag {
                case "--duration": options.duration = try duration(flag)
                case "--report-interval": options.reportInterval = max(try duration(flag), 0.1)
                case "--warm-up": options.warmUp = try duration(flag)
                case "--json": options.json = true
                case "--max-rss-slope-mb-per-hour": options.maxRSSSlope = try number(flag)
                case "--rss-noise-mb": options.rssNoise = try number(flag)
                case "--max-fd-growth": options.maxDescriptorGrowth = Int(try number(flag))
                case "--peer-restart": options.peerRestart = try duration(flag)
                case "--redis-restart": options.redisRestart = try duration(flag)
                case "--observer-churn": options.observerChurn = max(try duration(flag), 0.05)
                case "--rate": options.rate = max(try number(flag), 0.01)
                case "--no-dbus": options.dbus = false
                case "--no-redis": options.redis = false
                case "--no-cross-process": options.crossProcess = false
                default: throw SoakUsageError("unknown argument '\(flag)'")
                }
            }
        } catch {
            return .failure(error)
        }
        return .success(options)
    }

    /// "90", "90s", "30m", "2h", "1.5h" → seconds.
    static func parseDuration(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        if let last = text.last, let unit = units[last] {
            return Double(text.dropLast()).map { $0 * unit }
        }
        return Double(text)
    }
}

/// A command-line mistake.
struct SoakUsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
