import BenchSupport
import NIOSocketPeer
import PeerSupport

/// The cross-process scenarios (Docs/Benchmarks.md, "Cross-process"): a server in a second process
/// (`CrossProcessBenchPeer`), round trips and bursts from one or four senders, every transport side by
/// side in one run.
///
/// Thread-safety: call from the benchmark registration closure only.
func registerCrossProcessScenarios() {
    Scenarios.crossProcess(.raw)
    Scenarios.crossProcess(.nio)
    Scenarios.crossProcess(.dbus)
    Scenarios.crossProcess(.ours)
    Scenarios.crossProcess(.oursAsync, roundTripOnly: true)
}
