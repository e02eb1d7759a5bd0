import Foundation
import PortRunLoopDBus
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// An `arg0` holding a quote that a combining mark follows is quoted in the rule the daemon
/// gets, and matches its signal (found by `fuzz-match-rule`: the quote and the mark make one
/// character, which a search for `'` by characters skipped, so the rule's quoting broke there
/// and the daemon read another rule, or none).
@Suite(.timeLimit(.minutes(1)))
struct BusMatchRuleQuotingTests {
    @Test(arguments: ["it'\u{064B}s", "'\u{0301}", "plain 'quoted' text", "\u{064B}uoted' \\ b"])
    func anArg0WithQuotesMatchesItsSignal(value: String) throws {
        let fixture = try BusFixture()
        defer { fixture.shutDown() }
        let seen = Collector<BusSignal>()
        let observation = try fixture.center.addSignalObserver(
            matching: BusMatchRule(path: "/org/example/Test", interface: "org.example.Test", member: "Ping", arg0: value),
            on: fixture.thread.loop) { seen.append($0) }
        defer { observation.remove() }
        for argument in [value + "x", value] {
            let result = try runTool("/usr/bin/dbus-send", ["--bus=\(fixture.bus.address)", "--type=signal", "/org/example/Test",
                                                            "org.example.Test.Ping", "string:" + argument])
            #expect(result.status == 0, "\(result.output)")
        }
        #expect(seen.wait(for: 1))
        try fixture.sync()
        #expect(seen.values.map(\.arguments) == [[.string(value)]])
    }
}
