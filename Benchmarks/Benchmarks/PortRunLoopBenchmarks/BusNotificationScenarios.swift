import BenchSupport
import PeerSupport

/// The bus-notification scenarios (Docs/Benchmarks.md, "Bus notifications"): notifications between
/// two processes over D-Bus and over Redis, `BusNotificationCenter` against C on the same library,
/// side by side in one run.
///
/// Thread-safety: call from the benchmark registration closure only.
func registerBusNotificationScenarios() {
    for peer in BusNotificationPeer.all {
        Scenarios.busNotification(peer)
    }
}
