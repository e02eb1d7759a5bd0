#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import PortRunLoopStressEngine
import Testing
import PortRunLoopTestSupport

/// Many async requests at once on one connection to a real second process, mixed from a seeded
/// generator: plain ones, ones cancelled at a random point (waiting for a credit, spinning, or
/// suspended for the reply), and ones with a receive timeout of 20 µs; the receiver's
/// queue holds two, so most wait for a credit. Every request ends (no task is left waiting), each
/// reply reaches its own request only, a cancelled or timed-out one ends with that error or its
/// reply, and afterwards no task is counted as waiting and a plain request is answered.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessAsyncRequestMixTests {
    /// How one request of the mix is made.
    private enum Kind: CaseIterable { case plain, cancelled, shortTimeout }

    /// What one request ended with.
    private enum Outcome: Equatable {
        case replied(msgid: UInt32, components: [Data])
        case failed(CrossProcessPortError)
    }

    @Test(arguments: [UInt64(0x5eed_0001), 0x5eed_0002, 0x5eed_0003])
    func everyRequestEndsAndEachReplyReachesItsOwnRequest(seed: UInt64) async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let process = try CrossProcessProbeProcess(["publish", directory.path, "mix", "2", "reply"])
        defer { process.kill9() }
        #expect(process.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "mix")
        let connection = try #require(remote.remote as? RemoteConnection)
        // The tasks run on two loop threads of their own, not on the shared pool.
        let callers = try (0..<2).map { try RunLoopThread(name: "mix-\($0)") }
        defer { callers.forEach { $0.stop() } }

        var generator = SeededGenerator(seed: seed)
        let lanes = 8, perLane = 40
        let plans: [[(msgid: UInt32, kind: Kind, cancelAfterYields: Int)]] = (0..<lanes).map { lane in
            (0..<perLane).map { index in
                (UInt32(lane * 1_000 + index), Kind.allCases.randomElement(using: &generator)!,
                 Int.random(in: 0...3, using: &generator))
            }
        }
        let outcomes = await withTaskGroup(of: [(UInt32, Kind, Outcome)].self) { group in
            for (lane, plan) in plans.enumerated() {
                group.addTask(executorPreference: callers[lane % callers.count].loop.taskExecutor) {
                    var ended: [(UInt32, Kind, Outcome)] = []
                    for (msgid, kind, yields) in plan {
                        let request = Task(executorPreference: callers[lane % callers.count].loop.taskExecutor) { () -> Outcome in
                            do throws(CrossProcessPortError) {
                                let reply = try await remote.sendRequest(
                                    msgid: msgid, components: [Data("\(msgid)".utf8)], sendTimeout: .seconds(30),
                                    receiveTimeout: kind == .shortTimeout ? .microseconds(20) : .seconds(30))
                                return .replied(msgid: reply.msgid, components: reply.components)
                            } catch {
                                return .failed(error)
                            }
                        }
                        if kind == .cancelled {
                            for _ in 0..<yields { await Task.yield() }
                            request.cancel()
                        }
                        ended.append((msgid, kind, await request.value))
                    }
                    return ended
                }
            }
            var all: [(UInt32, Kind, Outcome)] = []
            for await lane in group { all += lane }
            return all
        }

        #expect(outcomes.count == lanes * perLane)
        for (msgid, kind, outcome) in outcomes {
            let ownReply = Outcome.replied(msgid: msgid + 1000, components: [Data("\(msgid)".utf8)])
            switch kind {
            case .plain: #expect(outcome == ownReply, "seed \(seed), msgid \(msgid)")
            case .cancelled: #expect(outcome == ownReply || outcome == .failed(.cancelled), "seed \(seed), msgid \(msgid): \(outcome)")
            case .shortTimeout: #expect(outcome == ownReply || outcome == .failed(.receiveTimedOut), "seed \(seed), msgid \(msgid): \(outcome)")
            }
        }
        #expect(connection.asyncWatchState.tasksWaiting == 0)
        let last = try await remote.sendRequest(msgid: 99_999, sendTimeout: .seconds(30), receiveTimeout: .seconds(30))
        #expect(last.msgid == 99_999 + 1000)
        #expect(remote.isValid)
    }
}
