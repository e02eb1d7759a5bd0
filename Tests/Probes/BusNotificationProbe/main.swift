// BusNotificationProbe: a program whose main thread runs `PortRunLoop.main` with a
// BusNotificationCenter on it, used by BusNotificationTwoProcessTests (a second real process on
// the bus).
//
// Usage:
//   BusNotificationProbe post <bus-address> <name> <count> <poster-id>
//     posts <count> notifications named <name>, userInfo ["poster": <poster-id>, "seq": 0…],
//     from a background thread; exits 0 once its own last post came back through the bus.
//   BusNotificationProbe observe <bus-address> <name> <count>
//     prints "ready" once observing, then exits 0 after <count> notifications, printing
//     "received <count> ordered <true|false>" (ordered: each poster's seq kept increasing by 1).
// <bus-address> may be "session" or "system": the session or system bus, whose address libdbus
// takes from DBUS_SESSION_BUS_ADDRESS / DBUS_SYSTEM_BUS_ADDRESS.
// Exits 2 on a usage or bus error, 3 when it does not finish within 60 seconds (a safety bound).
import Foundation
import PortRunLoopDBus
import PortRunLoopKit

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("BusNotificationProbe: \(message)\n".utf8))
    exit(status)
}

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 4, let count = Int(arguments[3]), count >= 0 else {
    fail("usage: post <address> <name> <count> <poster-id> | observe <address> <name> <count>", status: 2)
}
let (mode, address, name) = (arguments[0], arguments[1], Notification.Name(arguments[2]))

let finished = DispatchSemaphore(value: 0)
Thread.detachNewThread {
    if finished.wait(timeout: .now() + 60) == .timedOut { fail("did not finish within 60 s", status: 3) }
}

let center: BusNotificationCenter
do {
    let endpoint: BusEndpoint = switch address {
    case "session": .session
    case "system": .system
    default: .dbus(address: address)
    }
    center = try BusNotificationCenter(endpoint: endpoint, loop: .main)
} catch {
    fail("\(error)", status: 2)
}
let disconnected = center.addDisconnectionObserver(on: .main) { _ in fail("the bus went away", status: 2) }

/// State touched only on the main thread (the delivery thread of every observation here).
final class MainState: @unchecked Sendable {
    var received = 0
    var lastSeq: [String: Int] = [:]
    var ordered = true
}
let main = MainState()
var observation: BusObservation?

switch mode {
case "post":
    guard arguments.count == 5 else { fail("post needs a poster id", status: 2) }
    let poster = arguments[4]
    let flush = Notification.Name("probe.flush.\(poster).\(ProcessInfo.processInfo.processIdentifier)")
    do {
        observation = try center.addObserver(forName: flush, suspensionBehavior: .deliverImmediately, on: .main) { _ in
            PortRunLoop.main.stop()
        }
    } catch {
        fail("\(error)", status: 2)
    }
    Thread.detachNewThread {
        do {
            for seq in 0..<count {
                try center.post(name: name, userInfo: ["poster": poster, "seq": seq])
            }
            // Posts from one thread keep their order: this one comes back after all of them.
            try center.post(name: flush)
        } catch {
            fail("\(error)", status: 2)
        }
    }
    PortRunLoop.main.run()
    say("posted \(count)")
case "observe":
    do {
        observation = try center.addObserver(forName: name, suspensionBehavior: .hold, on: .main) { note in
            let poster = note.userInfo?["poster"] as? String ?? "?"
            let seq = note.userInfo?["seq"] as? Int ?? -1
            if seq != (main.lastSeq[poster] ?? -1) + 1 { main.ordered = false }
            main.lastSeq[poster] = seq
            main.received += 1
            if main.received == count { PortRunLoop.main.stop() }
        }
    } catch {
        fail("\(error)", status: 2)
    }
    say("ready")
    if count > 0 { PortRunLoop.main.run() }
    say("received \(main.received) ordered \(main.ordered)")
default:
    fail("unknown mode \(mode)", status: 2)
}
finished.signal()
disconnected.remove()
observation?.remove()
center.close()
exit(0)
