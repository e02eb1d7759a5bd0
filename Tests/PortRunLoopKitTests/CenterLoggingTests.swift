import Foundation
import Logging
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// What a `ThreadNotificationCenter` logs: deliveries discarded because their thread's loop shut
/// down, once per discarded batch with the count.
@Suite(.timeLimit(.minutes(1))) struct CenterLoggingTests {
    @Test func notificationsDiscardedAtShutdownAreLoggedOnceWithTheirCount() throws {
        let recorder = LogRecorder()
        let center = ThreadNotificationCenter(logger: recorder.logger)
        let observer = try RunLoopThread(name: "log-center")
        let never = RunLoop.Mode("log-center.never-run")
        let token = center.addObserver(forName: .init("logged"), on: observer.loop, inModes: [never]) { _ in }
        let queue = center.queue(for: observer.loop) // the center lets go of it as the loop shuts down
        for _ in 0..<3 { center.post(name: .init("logged")) }
        observer.stop() // the loop never ran the observation's mode: the three are discarded
        let discards = recorder.entries.filter { $0[LogKeys.discarded] != nil }
        #expect(discards.count == 1)
        #expect(discards.first?.level == .notice)
        #expect(discards.first?[LogKeys.discarded] == "3")
        #expect(discards.first?[LogKeys.loop] == "log-center")
        #expect(queue.metrics.discarded == 3)
        withExtendedLifetime(token) {}
    }
}
