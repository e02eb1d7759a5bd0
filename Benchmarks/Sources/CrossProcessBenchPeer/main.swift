// The second process of the cross-process benchmarks (Benchmarks/Sources/BenchSupport/CrossProcess.swift).
//
//   CrossProcessBenchPeer serve raw|nio|dbus|ours ADDRESS   serves the exchange; prints "ready" once it does
//   CrossProcessBenchPeer send raw|nio|dbus|ours ADDRESS SIZE
//       connects, prints "ready", then for each line "burst N" on stdin sends N sink messages and a
//       flush, for each line "rounds N" makes N echo round trips, and prints "done"; exits at the end
//       of stdin (a client to trace or profile on its own: strace, perf, callgrind).
//   CrossProcessBenchPeer notify-send|notify-receive|notify-ping|notify-echo dbus.ours|dbus.raw|redis.ours|redis.raw[.bare|.durable] ADDRESS
//       the bus-notification scenarios' second process (BusNotificationPeerProcess.swift).
//   CrossProcessBenchPeer idle-connect tcp PORT COUNT
//       opens COUNT TCP connections to 127.0.0.1:PORT, prints "ready", sends nothing, and exits at
//       the end of stdin (the idle connections of the echo scenarios: IdleConnections.swift).
// ADDRESS is a socket path (raw, nio), a bus address (dbus) a port name (ours) or a Redis port on 127.0.0.1.
import CBenchNative
import Foundation
import NIOSocketPeer
import PeerSupport

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("CrossProcessBenchPeer: \(message)\n".utf8))
    exit(2)
}

/// One line to the benchmark, unbuffered (it waits for it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: serve|send TRANSPORT ADDRESS [SIZE]") }
let (role, transport, address) = (arguments[1], arguments[2], arguments[3])

switch (role, transport) {
case ("serve", "raw"):
    if cbench_seqpacket_serve(address, 1) != 0 { fail("raw server on \(address): errno \(errno)") }
case ("serve", "dbus"):
    if cbench_dbus_serve(address, 1) != 0 { fail("D-Bus server on \(address) failed") }
case ("serve", "ours"):
    do {
        let server = try CrossProcessPortPeer.serve(name: address)
        say("ready")
        withExtendedLifetime(server) { while true { pause() } }
    } catch {
        fail("published port \(address): \(error)")
    }
case ("serve", "nio"):
    do {
        let server = try NIOUnixSocketServer(path: address)
        say("ready")
        server.wait()
    } catch {
        fail("NIO server on \(address): \(error)")
    }
case ("send", _):
    guard arguments.count >= 5, let size = Int(arguments[4]) else { fail("send needs a SIZE") }
    let connect: CrossProcessTransport
    switch transport {
    case "raw": connect = .raw
    case "dbus": connect = .dbus
    case "nio": connect = .nio
    case "ours": connect = .ours
    default: fail("unknown transport \(transport)")
    }
    do {
        let client = try connect.connect(address)
        say("ready")
        while let line = readLine() {
            if line.hasPrefix("rounds "), let count = Int(line.dropFirst(7)) {
                try client.roundTrips(count, size: size, latencies: nil)
            } else if line.hasPrefix("burst "), let count = Int(line.dropFirst(6)) {
                try client.burst(count, size: size)
            } else {
                fail("bad command '\(line)'")
            }
            say("done")
        }
        client.close()
    } catch {
        fail("\(transport) sender to \(address): \(error)")
    }
case ("idle-connect", "tcp"):
    guard arguments.count >= 5, let port = Int(address), let count = Int(arguments[4]), count > 0 else {
        fail("idle-connect tcp needs a PORT and a COUNT")
    }
    var descriptors: [Int32] = []
    descriptors.reserveCapacity(count)
    for index in 0..<count {
        let fd = cbench_tcp_connect_loopback(Int32(port), 0)
        if fd < 0 { fail("idle connection \(index + 1) of \(count) to 127.0.0.1:\(port): errno \(errno)") }
        descriptors.append(fd)
    }
    say("ready")
    while readLine() != nil {}
    for fd in descriptors { close(fd) }
case ("notify-send", _), ("notify-receive", _), ("notify-ping", _), ("notify-echo", _):
    runBusNotificationPeerProcess(role: role, peer: transport, address: address)
default:
    fail("unknown role \(role) or transport \(transport)")
}
