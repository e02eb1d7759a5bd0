import Foundation
import PortRunLoopKit
import Testing

/// The README's example, verbatim (between the markers), so the README cannot drift from the API.
@Suite(.timeLimit(.minutes(1))) struct ReadmeExampleTests {
    @Test func readmeExampleCompilesAndRuns() throws {
        // README example begins
        // A named thread that runs its own loop.
        let worker = try RunLoopThread(name: "worker")

        // Fire-and-forget work, in order, on that thread (wakes it if it sleeps).
        worker.loop.perform { print("hello from", Thread.current.name ?? "?") }

        // Call it and get the result back, or its error: performSelector:onThread:waitUntilDone: with a result.
        let answer = try worker.loop.performAndWait { 6 * 7 }

        // A port: any thread sends, the worker's thread handles, in order.
        let port = MessagePort(queueLimit: 64)
        port.setHandler { message in print("message", message.msgid, "on", Thread.current.name ?? "?") }
        worker.loop.add(port, forMode: .common)
        port.send(before: .distantFuture, msgid: UInt32(answer))


        // Handles what was queued before the call, then ends the loop and joins the thread.
        worker.stop()
        // README example ends
        #expect(answer == 42)
        #expect(port.statistics.delivered == 1)
    }

    @Test func readmeCodeBlockMatchesThisFile() throws {
        let (test, readme) = try ReadmeCodeBlocks.compare(testFile: #filePath, marker: "README example", heading: "## Example")
        #expect(readme == test)
    }
}
