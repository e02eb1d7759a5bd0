import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Testing

/// The stress suite, small: the same engine `portrunloop-stress` runs at full size.
/// Producers × items to several loops, mixing sends (zero-timeout and timed, with and without
/// payloads), perform, performAndWait (with timeouts, throwing bodies), loop-to-loop synchronous
/// calls, notification posts and observer add/remove, with chaos: port invalidation, loop
/// stop/restart and consumer thread exit (RunLoopThread.stop and plain thread exit). Checks
/// exactly-once, FIFO per producer, rejected ⇔ never delivered, nothing after invalidation or
/// removal returned, port statistics, and that every thread joins. The seed is printed;
/// `PORTRUNLOOP_STRESS_SEED` replays a run's choices.
@Suite(.timeLimit(.minutes(3))) struct StressTests {
    private func run(_ configure: (inout StressConfiguration) -> Void) async {
        var config = StressConfiguration(seed: StressConfiguration.seedFromEnvironment())
        config.producers = 3
        config.itemsPerProducer = 1_500
        config.loops = 3
        config.roundTimeout = 120
        configure(&config)
        print("StressTests: \(config)")
        let report = await offThePool { [config] in StressEngine.run(config) }
        print(report)
        #expect(report.passed, "\(report)")
        #expect(report.threadsStarted == report.threadsJoined)
        #expect(report.sendsAccepted > 0 && report.performsRun > 0 && report.callsReturned > 0)
    }

    @Test func mixedTrafficWithChaos() async {
        await run { $0.chaos = true }
    }

    @Test func mixedTrafficWithoutChaosDeliversEverythingAccepted() async {
        await run { config in
            config.chaos = false
            config.loops = 2
        }
    }

    @Test func manyRoundsOfFewItems() async {
        // Many short rounds: set-up and tear-down races (thread start, registration from another
        // thread, retirement while traffic starts) get more chances than in one long round.
        await run { config in
            config.itemsPerProducer = 150
            config.duration = 1.5
        }
    }
}
