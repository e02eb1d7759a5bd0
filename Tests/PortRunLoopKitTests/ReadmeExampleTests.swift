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
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let test = try String(contentsOf: here, encoding: .utf8)
        func normalized(_ lines: some Sequence<Substring>) -> [String] {
            lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let begin = "// README example " + "begins", end = "// README example " + "ends"
        let testLines = test.split(separator: "\n", omittingEmptySubsequences: false)
        let from = try #require(testLines.firstIndex { $0.contains(begin) })
        let to = try #require(testLines.firstIndex { $0.contains(end) })
        let fromTest = normalized(testLines[(from + 1)..<to])
        let block = try #require(readme.components(separatedBy: "## Example\n\n```swift\n").dropFirst().first?
            .components(separatedBy: "```").first)
        let fromReadme = normalized(block.split(separator: "\n", omittingEmptySubsequences: false))
            .filter { !$0.hasPrefix("import ") }
        #expect(fromReadme == fromTest)
    }
}
