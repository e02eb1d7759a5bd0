#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// The async forms of `sendRequest`: sent from the task when a credit allows, awaited with no
/// thread blocked (the library's reader thread reads the reply and times the request out),
/// cancellable while the reply is awaited; without a credit, the request waits for one the same
/// way, suspended on no thread, and cancellable too (X8).
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessAsyncRequestTests {
    /// A publishing probe process answering every request with `msgid + 1000` (or, `silent`, none).
    private func publisher(_ directory: NameDirectory, _ name: String, _ arguments: [String] = ["5", "reply"]) throws
        -> CrossProcessProbeProcess {
        let process = try CrossProcessProbeProcess(["publish", directory.path, name] + arguments)
        #expect(process.waitForLine(startingWith: "READY") != nil)
        return process
    }

    /// An async request to `remote` in a task of its own (preferring `loop`'s thread when given),
    /// whose value is the error it ended with (nil: it got a reply).
    private func pendingRequest(_ remote: MessagePort, msgid: UInt32, sendTimeout: Duration = .seconds(5), receiveTimeout: Duration,
                                on loop: PortRunLoop? = nil) -> Task<CrossProcessPortError?, Never> {
        Task(executorPreference: loop?.taskExecutor) {
            await thrownError { () async throws(CrossProcessPortError) in
                _ = try await remote.sendRequest(msgid: msgid, sendTimeout: sendTimeout, receiveTimeout: receiveTimeout)
            }
        }
    }

    @Test func concurrentRequestsEachGetTheirOwnReply() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let process = try publisher(directory, "many")
        defer { process.kill9() }
        let remote = try directory.registry.remotePort(named: "many")
        // Four at a time (the queue limit is 5: each may go at once), 200 in all.
        for round in 0..<50 {
            try await withThrowingTaskGroup(of: (UInt32, UInt32, [Data]).self) { group in
                for lane in 0..<4 {
                    let msgid = UInt32(round * 4 + lane)
                    group.addTask {
                        let reply = try await remote.sendRequest(msgid: msgid, components: [Data("\(msgid)".utf8)],
                                                                 sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
                        return (msgid, reply.msgid, reply.components)
                    }
                }
                for try await (msgid, replied, components) in group {
                    #expect(replied == msgid + 1000)
                    #expect(components == [Data("\(msgid)".utf8)])
                }
            }
        }
    }

    @Test func aRequestThatCanGoAtOnceMakesNoThread() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let process = try publisher(directory, "threadless")
        defer { process.kill9() }
        let remote = try directory.registry.remotePort(named: "threadless")
        _ = try await remote.sendRequest(msgid: 0, sendTimeout: .seconds(10), receiveTimeout: .seconds(10)) // the reader thread runs
        // From now on the requests' task runs on a loop thread that cannot make threads: a
        // request that needed one would fail.
        let caller = try RunLoopThread(name: "no-threads-here")
        defer { caller.stop() }
        try caller.loop.performAndWait { try SyscallRefusal.threadCreation(errno: EAGAIN).installOnCurrentThread() }
        let replies = try await Task(executorPreference: caller.loop.taskExecutor) { () async throws -> [UInt32] in
            var replies: [UInt32] = []
            for msgid: UInt32 in 1...100 {
                let reply = try await remote.sendRequest(msgid: msgid, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
                replies.append(reply.msgid)
            }
            return replies
        }.value
        #expect(replies == Array(1001...1100))
    }

    @Test func noReplyEndsWithAReceiveTimeoutAndAnEarlierDeadlineIsNotHeldUpByALaterOne() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let process = try publisher(directory, "silent-async", ["5"])
        defer { process.kill9() }
        let remote = try directory.registry.remotePort(named: "silent-async")
        // A request due in a minute arms the reader thread's timer first...
        let late = pendingRequest(remote, msgid: 1, receiveTimeout: .seconds(60))
        #expect(process.waitForLine(startingWith: "MSG 1 ") != nil)
        // ...and one due sooner still ends at its own timeout, not at that timer.
        let start = ContinuousClock.now
        let early = await thrownError { () async throws(CrossProcessPortError) in
            _ = try await remote.sendRequest(msgid: 2, sendTimeout: .seconds(5), receiveTimeout: .milliseconds(200))
        }
        let took = ContinuousClock.now - start
        #expect(early == .receiveTimedOut)
        #expect(took >= .milliseconds(200) && took < .seconds(30))
        #expect(process.waitForLine(startingWith: "MSG 2 ") != nil) // both were delivered, just not answered
        late.cancel()
        #expect(await late.value == .cancelled)
    }

    @Test func cancellingTheTaskEndsTheWaitForTheReply() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let process = try publisher(directory, "cancelled", ["5"])
        defer { process.kill9() }
        let remote = try directory.registry.remotePort(named: "cancelled")
        let request = pendingRequest(remote, msgid: 7, receiveTimeout: .seconds(600))
        #expect(process.waitForLine(startingWith: "MSG 7 ") != nil) // sent, and awaited
        let start = ContinuousClock.now
        request.cancel()
        #expect(await request.value == .cancelled)
        #expect(ContinuousClock.now - start < .seconds(30))
        #expect(remote.isValid) // the port goes on
    }

    @Test func aPublisherThatWithdrawsOrDiesOrAPortInvalidatedHereEndsTheWait() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        for (name, end, expected) in [("withdrawn", "invalidate", CrossProcessPortError.invalidPort), ("killed", "kill", .peerDied),
                                      ("invalidated-here", "local", .invalidPort)] {
            let process = try publisher(directory, name, ["5"])
            defer { process.kill9() }
            let remote = try directory.registry.remotePort(named: name)
            let request = pendingRequest(remote, msgid: 8, receiveTimeout: .seconds(600))
            #expect(process.waitForLine(startingWith: "MSG 8 ") != nil) // sent, and awaited
            switch end {
            case "kill": process.send(SIGKILL)
            case "local": remote.invalidate()
            default: process.tell(end)
            }
            let outcome = await request.value
            #expect(outcome == expected, "\(name)")
            #expect(!remote.isValid)
        }
    }

    @Test func withoutACreditItWaitsForOneOrTimesOut() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // Queue limit 1 and the owner loop held: the first send spends the only credit.
        let process = try publisher(directory, "no-credit", ["1", "hold", "reply"])
        defer { process.kill9() }
        let remote = try directory.registry.remotePort(named: "no-credit")
        #expect(remote.send(before: Date(), msgid: 1))
        await #expect(throws: CrossProcessPortError.sendTimedOut) {
            _ = try await remote.sendRequest(msgid: 2, sendTimeout: .zero, receiveTimeout: .seconds(5))
        }
        await #expect(throws: CrossProcessPortError.sendTimedOut) {
            _ = try await remote.sendRequest(msgid: 3, sendTimeout: .milliseconds(200), receiveTimeout: .seconds(5))
        }
        // A request waiting for its credit gets it once the loop takes the held message.
        async let reply = remote.sendRequest(msgid: 4, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
        process.tell("go")
        #expect(try await reply.msgid == 1004)
    }

    @Test func aRequestWaitingForACreditMakesNoThread() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let process = try publisher(directory, "no-thread", ["1", "hold", "reply"])
        defer { process.kill9() }
        let remote = try directory.registry.remotePort(named: "no-thread")
        let connection = try #require(remote.remote as? RemoteConnection)
        #expect(remote.send(before: Date(), msgid: 1)) // the only credit
        // The request's task runs on a loop thread on which `clone3` is refused from now on; it
        // waits for its credit suspended, on no thread.
        let caller = try RunLoopThread(name: "no-threads-here")
        defer { caller.stop() }
        try caller.loop.performAndWait { try SyscallRefusal.threadCreation(errno: EAGAIN).installOnCurrentThread() }
        // Timeouts beyond the suite's time limit: the test may be resumed late on a loaded machine.
        let waiting = pendingRequest(remote, msgid: 2, sendTimeout: .seconds(600), receiveTimeout: .seconds(600), on: caller.loop)
        #expect(eventually { connection.asyncWatchState.tasksWaiting == 1 })
        process.tell("go") // the loop takes message 1, and its credit comes back
        #expect(await waiting.value == nil)
        #expect(process.waitForLine(startingWith: "MSG 2 ") != nil)
        #expect(process.lines(startingWith: "MSG").map { $0.split(separator: " ")[1] } == ["1", "2"])
    }

    @Test func aTaskCancelledBeforeItsRequestSendsNothing() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let process = try publisher(directory, "pre-cancelled")
        defer { process.kill9() }
        let remote = try directory.registry.remotePort(named: "pre-cancelled")
        let request = Task { () -> CrossProcessPortError? in
            withUnsafeCurrentTask { $0?.cancel() }
            return await thrownError { () async throws(CrossProcessPortError) in
                _ = try await remote.sendRequest(msgid: 4, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
            }
        }
        #expect(await request.value == .cancelled)
        // The publisher sees request 5 only: request 4 never went out.
        let reply = try await remote.sendRequest(msgid: 5, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
        #expect(reply.msgid == 1005)
        #expect(process.waitForLine(startingWith: "MSG 5 ") != nil)
        #expect(process.lines(startingWith: "MSG").map { $0.split(separator: " ")[1] } == ["5"])
    }

    @Test func cancellingARequestWaitingForACreditSendsNothing() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let process = try publisher(directory, "cancel-credit", ["1", "hold", "reply"])
        defer { process.kill9() }
        let remote = try directory.registry.remotePort(named: "cancel-credit")
        let connection = try #require(remote.remote as? RemoteConnection)
        #expect(remote.send(before: Date(), msgid: 1)) // the only credit
        let caller = try RunLoopThread(name: "cancel-credit")
        defer { caller.stop() }
        // Timeouts beyond the suite's time limit: the test may be resumed late on a loaded machine.
        let waiting = pendingRequest(remote, msgid: 2, sendTimeout: .seconds(600), receiveTimeout: .seconds(600), on: caller.loop)
        #expect(eventually { connection.asyncWatchState.tasksWaiting == 1 })
        waiting.cancel()
        #expect(await waiting.value == .cancelled)
        #expect(connection.asyncWatchState.tasksWaiting == 0)
        // Released, the publisher sees message 1 and then request 3 only: request 2 never went out.
        process.tell("go")
        let reply = try await remote.sendRequest(msgid: 3, sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
        #expect(reply.msgid == 1003)
        #expect(process.waitForLine(startingWith: "MSG 3 ") != nil) // printed before the reply, read here by another thread
        #expect(process.lines(startingWith: "MSG").map { $0.split(separator: " ")[1] } == ["1", "3"])
        #expect(remote.isValid)
    }
}
