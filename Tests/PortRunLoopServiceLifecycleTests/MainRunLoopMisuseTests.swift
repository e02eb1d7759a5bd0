import Foundation
import PortRunLoopServiceLifecycle
import ServiceLifecycle
import Testing

/// `MainRunLoop.run(_:)` must be called on the main thread (whose loop it runs): elsewhere it traps
/// with a message naming the call, before it starts the group.
@Suite(.timeLimit(.minutes(1))) struct MainRunLoopMisuseTests {
    @Test func runningItOffTheMainThreadTraps() async {
        // An exit test's body runs off the main thread, in a child process.
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            runTheMainLoopHere()
        }
        // The message holds in release builds too (the library's misuse checks are not `precondition`s).
        let message = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(message.contains("PortRunLoop misuse: MainRunLoop.run(_:) must be made on the loop's own thread ('main')"), "stderr: \(message)")
    }
}

/// A synchronous caller (`MainRunLoop.run(_:)` is `noasync`).
private func runTheMainLoopHere() {
    try? MainRunLoop.run(ServiceGroup(services: [], logger: quietLogger))
}
