import CChildProcess
import Foundation
import PortRunLoopKit

/// The soak's peer process (`portrunloop-soak --child <dir> <incarnation> <parent pid> <rate>`):
/// it dies with its parent, publishes `child-<incarnation>` in `<dir>` (answering each request
/// with its echo, and checking that one-way messages come in order without gaps), makes
/// requests to the parent's `parent` port (each reply must be its request's echo; every 32nd
/// carries a pipe's read end), prints `READY` once published and its counts (`STATS …`) twice a
/// second, and runs until it is killed.
///
/// Thread-safety: runs on the main thread of its own process.
enum SoakChild {
    static let onewayID: UInt32 = 1
    static let requestID: UInt32 = 2
    static let replyID: UInt32 = 3

    static func run(_ arguments: [String]) -> Never {
        guard arguments.count >= 4, let incarnation = UInt64(arguments[1]), let parent = Int32(arguments[2]),
              let rate = Double(arguments[3]) else { say("ERROR usage"); exit(2) }
        guard child_process_die_with_parent() == 0, getppid() == parent else { exit(3) }
        let registry = MessagePortNameRegistry(directory: arguments[0])
        let stats = Shared(PeerStats())
        let expected = Shared<UInt64?>(nil)

        let owner: RunLoopThread
        do { owner = try RunLoopThread(name: "soak-child-owner") } catch { say("ERROR \(error)"); exit(2) }
        let port = MessagePort(queueLimit: 16)
        port.setHandler { message in
            switch message.msgid {
            case onewayID:
                guard let sequence = message.components.first.flatMap({ Payload.value($0) }) else { return stats.withLock { $0.bad += 1 } }
                let next = expected.withLock { next in defer { next = sequence + 1 }; return next }
                stats.withLock { stats in
                    if let next, sequence > next { stats.gaps += Int(sequence - next) }
                    if let next, sequence < next { stats.bad += 1; say("BAD one-way \(sequence) after \(next - 1)") }
                    stats.oneway += 1
                }
            case requestID:
                if !message.reply(msgid: replyID, components: message.components, before: Date(timeIntervalSinceNow: 2)) {
                    say("NOTE a reply could not be sent within 2 s")
                }
            default:
                stats.withLock { $0.bad += 1 }
            }
        }
        owner.loop.add(port, forMode: .common)
        let publication: PublishedMessagePort
        do { publication = try registry.publish(port, as: "child-\(incarnation)", on: owner.loop) } catch { say("ERROR publish: \(error)"); exit(2) }
        say("READY")

        Thread.detachNewThread {
            var remote: MessagePort?
            var sequence: UInt64 = 0
            let pause = UInt32(1_000_000 / max(150 * rate, 1))
            while true {
                usleep(pause)
                if remote?.isValid != true { remote = try? registry.remotePort(named: "parent") }
                guard let remote else { continue }
                sequence += 1
                let pipeEnds = sequence % 32 == 0 ? makePipe() : nil
                defer { if let pipeEnds { close(pipeEnds.0); close(pipeEnds.1) } }
                let components = [Payload.data(incarnation, sequence)]
                do {
                    let reply: MessagePort.Message
                    if let pipeEnds {
                        reply = try remote.sendRequest(msgid: requestID, components: components, fileDescriptors: [pipeEnds.0],
                                                       sendTimeout: .seconds(1), receiveTimeout: .seconds(5))
                    } else {
                        reply = try remote.sendRequest(msgid: requestID, components: components,
                                                       sendTimeout: .seconds(1), receiveTimeout: .seconds(5))
                    }
                    if reply.components == components {
                        stats.withLock { $0.ok += 1 }
                    } else {
                        stats.withLock { $0.bad += 1 }
                        say("BAD the reply to request \(sequence) was not its echo")
                    }
                } catch {
                    stats.withLock { $0.failed += 1 }
                    say("NOTE request \(sequence) failed: \(error)")
                }
            }
        }
        // The owner thread and the publication live until the process is killed (a released
        // RunLoopThread stops its thread). Extended inside the loop: around a closure that never
        // returns, `withExtendedLifetime` let the optimizer release them before the `publish`.
        while true {
            usleep(500_000)
            say(stats.withLock { $0 }.line)
            withExtendedLifetime((owner, publication)) {}
        }
    }

    private static func makePipe() -> (Int32, Int32)? {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        return (ends[0], ends[1])
    }

    private static let output = TracedMutex(())

    static func say(_ line: String) {
        output.withLock { _ in FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }
}

enum SoakChildError: Error {
    case notReady(String)
}
