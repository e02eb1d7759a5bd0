import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// A documented misuse stops the process with "PortRunLoop misuse: <what was wrong> (at
/// <file>:<line>)", in release builds as in debug ones (CI runs the `Misuse` suites with
/// `-c release`): a call on the wrong thread, an invalid argument, an API rule broken.
@Suite(.timeLimit(.minutes(1))) struct MisuseMessageTests {
    @Test func aWrongThreadCheckNamesTheCallTheLoopAndTheCallersLine() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "owner")
            thread.loop.preconditionOnLoopThread("closing the socket")
        }
        // The check takes its caller's location: the line of this file that asked for it.
        expectMisuse(result, "closing the socket must be made on the loop's own thread ('owner'), but was made on another thread",
                     at: "PortRunLoopKitTests/MisuseMessageTests.swift")
    }

    @Test func aLibraryMemberOffItsLoopsThreadIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let thread = try RunLoopThread(name: "owner")
            _ = thread.loop.run(mode: .default, before: .distantPast)
        }
        expectMisuse(result, "PortRunLoop.run(mode:before:) must be made on the loop's own thread ('owner')",
                     at: "PortRunLoopKit/PortRunLoop+Running.swift")
    }

    @Test func anInvalidArgumentIsNamedWithItsValues() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let peers = try StreamTestPeers { _ in }
            peers.connect { connection in connection.setWaterMarks(low: 5, high: 2) }
            DispatchSemaphore(value: 0).wait() // the client's loop thread stops the process
        }
        expectMisuse(result, "StreamConnection.setWaterMarks(low:high:): need 0 <= low <= high, got 5, 2",
                     at: "PortRunLoopKit/StreamConnection.swift")
    }

    @Test func aSenderNothingCouldMatchIsNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            struct Opaque {} // neither a class instance nor Hashable
            let observation = ThreadNotificationCenter().addObserver(forName: nil, object: Opaque()) { _ in }
            observation.remove()
        }
        expectMisuse(result, "ThreadNotificationCenter.addObserver(forName:object:on:inModes:using:): the sender filter is a value of type Opaque",
                     at: "PortRunLoopKit/SenderFilter.swift")
    }
}
