import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// `preconditionOnLoopThread(_:)`: passes on the loop's own thread, traps anywhere else with a
/// message naming the call and the loop.
@Suite struct LoopThreadPreconditionTests {
    @Test func passesOnTheLoopsOwnThread() throws {
        let thread = try RunLoopThread(name: "owner")
        defer { thread.stop() }
        let checked = try thread.loop.performAndWait { () -> Bool in
            thread.loop.preconditionOnLoopThread("closing the socket")
            return true
        }
        #expect(checked)
    }

    @Test func trapsOnAnotherThreadNamingTheCallAndTheLoop() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "owner")
            thread.loop.preconditionOnLoopThread("closing the socket")
        }
        expectMessage(result, contains: "closing the socket must be made on the loop's own thread ('owner')")
    }
}
