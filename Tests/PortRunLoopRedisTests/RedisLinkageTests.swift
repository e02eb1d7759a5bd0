import Foundation
import Testing
import PortRunLoopTestSupport

/// A program built on PortRunLoopRedis alone (RedisNotificationProbe) does not load libdbus: the
/// Redis product depends on the transport-neutral bus module, not on the D-Bus one.
@Suite(.timeLimit(.minutes(1))) struct RedisLinkageTests {
    @Test func theRedisProbeLinksHiredisAndNotLibdbus() throws {
        let (status, output) = try runTool("/usr/bin/ldd", [RedisTwoProcessTests.probe], seconds: 20)
        #expect(status == 0, "\(output)")
        let libraries = output.split(separator: "\n")
        #expect(libraries.contains { $0.contains("libhiredis") }, "\(output)")
        #expect(!libraries.contains { $0.contains("libdbus") }, "\(output)")
    }
}
