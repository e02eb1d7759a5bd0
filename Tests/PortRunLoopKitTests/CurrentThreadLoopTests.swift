import Foundation
import PortRunLoopKit
import PortRunLoopStressEngine
import Testing

/// `PortRunLoop.forCurrentThread()`: the calling thread's loop, made on its first use there, one
/// per thread, named after the thread, and shut down when the thread exits.
@Suite struct CurrentThreadLoopTests {
    /// What a thread saw of its own loop.
    struct Sighting: Sendable {
        let loop: PortRunLoop
        let sameOnSecondCall: Bool
        let sameAsCurrent: Bool
        let ownedByThisThread: Bool
    }

    static func sight(on name: String) throws -> Sighting {
        try JoinableThread.run(name: name) {
            let first = try PortRunLoop.forCurrentThread()
            return Sighting(loop: first, sameOnSecondCall: first === (try PortRunLoop.forCurrentThread()),
                            sameAsCurrent: first === PortRunLoop.current, ownedByThisThread: first.isCurrentThread)
        }
    }

    @Test func aPlainThreadGetsOneLoopNamedAfterItAndShutDownWhenItExits() throws {
        let sighting = try Self.sight(on: "plain-a")
        #expect(sighting.sameOnSecondCall)
        #expect(sighting.sameAsCurrent)
        #expect(sighting.ownedByThisThread)
        #expect(sighting.loop.name == "plain-a")
        #expect(!sighting.loop.isCurrentThread, "owned by the thread that made it, not by this one")
        #expect(sighting.loop.isShutDown, "its thread has exited (joined)")
        #expect(!sighting.loop.perform {}, "a loop whose thread exited takes no more work")
    }

    @Test func twoThreadsGetTwoLoops() throws {
        let a = try Self.sight(on: "plain-a")
        let b = try Self.sight(on: "plain-b")
        #expect(a.loop !== b.loop)
        #expect(b.loop.name == "plain-b")
    }

    @Test func onARunLoopThreadItIsThatThreadsLoop() throws {
        let thread = try RunLoopThread(name: "owner")
        defer { thread.stop() }
        let found = try thread.loop.performAndWait { try PortRunLoop.forCurrentThread() }
        #expect(found === thread.loop)
    }
}
