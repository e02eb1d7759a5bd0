import PortRunLoopRedis
import PortRunLoopTestSupport
import Testing

/// An invalid Redis endpoint stops the process with a message naming the field, in release builds
/// as in debug ones.
@Suite(.timeLimit(.minutes(1))) struct RedisEndpointMisuseTests {
    @Test func aPortOutsideTheRangeIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisEndpoint(port: 0)
        }
        expectMisuse(result, "RedisEndpoint: port 0 is not 1...65535", at: "PortRunLoopRedis/RedisEndpoint.swift")
    }

    @Test func aUsernameWithoutAPasswordIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = RedisEndpoint(username: "user")
        }
        expectMisuse(result, "RedisEndpoint: a username needs a password", at: "PortRunLoopRedis/RedisEndpoint.swift")
    }
}
