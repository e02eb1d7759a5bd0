import Foundation
import Logging
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// The redirector's doorbell: a dropped signal (one is already queued) is expected, so it is logged
/// at debug only, aggregated, and every notification is still delivered.
@Suite(.timeLimit(.minutes(1))) struct RedirectorLoggingTests {
    @Test func droppedDoorbellSignalsAreNotWarnings() throws {
        let recorder = LogRecorder()
        let thread = try RunLoopThread(name: "redirect-log", logger: recorder.logger)
        defer { thread.stop() }
        let handled = Recorder<String>()
        let redirector = try thread.loop.performAndWait {
            NotificationRedirector(loop: thread.loop, queueLimit: 1) { handled.append($0.name.rawValue) }
        }
        defer { redirector.invalidate() }
        let release = holdLoop(thread) // the port fills: later signals are dropped
        for i in 0..<200 { redirector.process(Notification(name: .init("n\(i)"))) }
        release.fire()
        try thread.loop.performAndWait {}
        #expect(handled.values == (0..<200).map { "n\($0)" })
        #expect(recorder.entries.allSatisfy { $0.level < .notice })
        #expect(recorder.entries.filter { $0.message.contains("doorbell") }.count <= 2)
    }
}
