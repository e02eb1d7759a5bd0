import PortRunLoopFuzzSupport

/// Every fuzz target's check.
///
/// Thread-safety: a stateless namespace.
package enum FuzzHarnesses {
    /// The checks, in the order `Scripts/fuzz.sh all` runs their targets.
    package static var all: [any FuzzHarness.Type] {
        [CrossProcessFrameHarness.self, RedisPayloadHarness.self, DBusSignalHarness.self,
         PropertyListHarness.self, MatchRuleHarness.self, EndpointHarness.self]
    }
}
