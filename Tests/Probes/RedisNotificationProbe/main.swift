// RedisNotificationProbe: a program that posts or echoes distributed notifications over Redis, for
// RedisTwoProcessTests (a second real process of the package).
//
// Usage:
//   RedisNotificationProbe post <port> <name> <count> <tag>
//       posts <count> notifications named <name> with userInfo ["tag": <tag>, "seq": 1...count],
//       then waits until the server has them all (flushRedisPosts) and prints "posted <count>".
//   RedisNotificationProbe echo <port> <in-name> <out-name> <count>
//       prints "ready" once observing <in-name>, posts each one it receives again as <out-name>
//       with the same object and userInfo, and exits after <count>.
//   RedisNotificationProbe observe-durable <port> <name> <group> <consumer>
//       observes the durable name <name> as <consumer> of <group>, prints "ready", then
//       "seq <seq>" for each notification it receives, until it is killed.
// Exit status: 0 done, 1 failed (the error is printed), 3 not done within 60 seconds (a safety
// bound, never used for ordering).
import Foundation
import PortRunLoopKit
import PortRunLoopRedis

/// Writes one line to stdout at once (unbuffered: the test waits for lines as they come).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    say("error: \(message)")
    exit(1)
}

let arguments = CommandLine.arguments
guard arguments.count == 6, let port = Int(arguments[2]) else {
    fail("usage: RedisNotificationProbe post <port> <name> <count> <tag> | echo <port> <in-name> <out-name> <count>"
         + " | observe-durable <port> <name> <group> <consumer>")
}
let done = DispatchSemaphore(value: 0)
let thread: RunLoopThread
let center: BusNotificationCenter
do {
    thread = try RunLoopThread(name: "redis-probe")
    var endpoint = RedisEndpoint(port: port)
    if arguments[1] == "observe-durable" {
        endpoint.durable = RedisDurableNotifications(names: [.init(arguments[3])], group: arguments[4], consumer: arguments[5],
                                                     blockTimeout: .milliseconds(200))
    }
    center = try BusNotificationCenter(redis: endpoint, loop: thread.loop)
} catch {
    fail("\(error)")
}

switch arguments[1] {
case "post":
    guard let count = Int(arguments[4]) else { fail("count is not a number") }
    let name = Notification.Name(arguments[3])
    let tag = arguments[5]
    do {
        for seq in 1...count { try center.post(name: name, object: tag, userInfo: ["tag": tag, "seq": seq]) }
        try center.flushRedisPosts(timeout: .seconds(60))
    } catch {
        fail("\(error)")
    }
    say("posted \(count)")
case "echo":
    guard let count = Int(arguments[5]) else { fail("count is not a number") }
    let output = Notification.Name(arguments[4])
    let received = ManagedAtomicCounter()
    let observation: BusObservation
    do {
        observation = try center.addObserver(forName: .init(arguments[3]), on: thread.loop) { note in
            do {
                try center.post(name: output, object: note.object as? String, userInfo: note.userInfo)
            } catch {
                fail("\(error)")
            }
            if received.increment() == count { done.signal() }
        }
    } catch {
        fail("\(error)")
    }
    say("ready")
    guard done.wait(timeout: .now() + 60) == .success else { say("timeout"); exit(3) }
    observation.remove()
    do { try center.flushRedisPosts() } catch { fail("\(error)") }
    say("echoed \(count)")
case "observe-durable":
    let observation: BusObservation
    do {
        observation = try center.addObserver(forName: .init(arguments[3]), on: thread.loop) { note in
            say("seq \(note.userInfo?["seq"] as? Int ?? -1)")
        }
    } catch {
        fail("\(error)")
    }
    say("ready")
    guard done.wait(timeout: .now() + 60) == .success else { say("timeout"); exit(3) } // never signalled: killed before
    observation.remove()
default:
    fail("unknown mode \(arguments[1])")
}
center.close()
thread.stop()
exit(0)

/// A counter bumped on the probe's loop thread (a lock keeps it simple and visible to TSan).
final class ManagedAtomicCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0 // guarded by `lock`
    func increment() -> Int {
        lock.lock(); defer { lock.unlock() }
        value += 1
        return value
    }
}
