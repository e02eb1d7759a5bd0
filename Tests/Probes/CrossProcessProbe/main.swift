// CrossProcessProbe: the other process of the cross-process port tests (CrossProcess*Tests). It
// publishes a port or sends to one, as its arguments say, and prints one line per event on
// standard output for the test to read. Every wait is bounded (30 s) except `publish`, which runs
// until its standard input closes or it is killed.
//
// Usage:
//   CrossProcessProbe publish <dir> <name> <queueLimit> [reply] [hold] [max=<bytes>]
//       prints READY, then "MSG <msgid> <onOwnerThread 0|1> <bytes>" per message and
//       "GONE <reason>" per peer that disconnected; `reply` answers each request with msgid+1000
//       and the same components; `hold` keeps the owner loop busy until a line "go" arrives on
//       standard input (messages are held meanwhile); a line "invalidate" invalidates the port
//       (it stays running) and prints INVALIDATED; "stats" prints "STATS <statistics>"; "cpu"
//       prints "CPU <microseconds>" (the process's CPU time so far); "fdlimit" lowers the
//       descriptor limit to the descriptors open (so `accept` fails with EMFILE) and prints
//       LIMITED, "fdunlimit" restores it and prints UNLIMITED. A message carrying file descriptors prints
//       "FD <count> <text>", the text read through each (taken) descriptor until end of file;
//       `replyfd` answers each request with msgid+2000 and the read end of a pipe holding "pong".
//   CrossProcessProbe send <dir> <name> <count> <timeoutMs> [size]
//       sends msgid 0..<count (count -1: forever), each waiting at most timeoutMs; prints
//       "SENT <i>" / "REFUSED <i>" per message, then "DONE <sent> <refused>" and "VALID <0|1>".
//   CrossProcessProbe request <dir> <name> <sendTimeoutMs> <receiveTimeoutMs>
//       prints "REPLY <msgid> <text>" or "ERROR <error>".
//   CrossProcessProbe sendfd <dir> <name> <text>
//       sends the read end of a pipe holding <text> (msgid 1) and prints "SENT" or "REFUSED".
import Foundation
import PortRunLoopKit

let output = NSLock()
func say(_ line: String) {
    output.lock()
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
    output.unlock()
}

/// A pipe holding `text` (its write end closed): the read end.
func pipeHolding(_ text: String) -> Int32 {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { fail("pipe: \(errno)") }
    let bytes = Array(text.utf8)
    guard write(ends[1], bytes, bytes.count) == bytes.count else { fail("write: \(errno)") }
    close(ends[1])
    return ends[0]
}

/// Reads `fd` to end of file and closes it.
func readAll(_ fd: Int32) -> String {
    var result = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
        let count = read(fd, &buffer, buffer.count)
        if count <= 0 { break }
        result += buffer[0..<count]
    }
    close(fd)
    return String(decoding: result, as: UTF8.self)
}

func fail(_ line: String) -> Never {
    say("ERROR \(line)")
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else { fail("usage: CrossProcessProbe publish|send|request <dir> <name> ...") }
let registry = MessagePortNameRegistry(directory: arguments[2])
let name = arguments[3]

switch arguments[1] {
case "publish":
    let limit = arguments.count > 4 ? Int(arguments[4]) ?? 5 : 5
    let flags = Set(arguments.dropFirst(5))
    var options = CrossProcessPortOptions()
    for flag in flags where flag.hasPrefix("max=") { options.maximumMessageSize = Int(flag.dropFirst(4))! }
    let owner = try RunLoopThread(name: "owner")
    let port = MessagePort(queueLimit: limit)
    let replies = flags.contains("reply")
    let replyFD = flags.contains("replyfd")
    let loop = owner.loop
    port.setHandler { message in
        say("MSG \(message.msgid) \(loop.isCurrentThread ? 1 : 0) \(message.components.reduce(0) { $0 + $1.count })")
        if !message.fileDescriptors.isEmpty {
            let texts = message.fileDescriptors.compactMap { $0.take() }.map(readAll)
            say("FD \(message.fileDescriptors.count) \(texts.joined(separator: "|"))")
        }
        if replyFD {
            let readEnd = pipeHolding("pong")
            message.reply(msgid: message.msgid + 2000, fileDescriptors: [readEnd], before: Date(timeIntervalSinceNow: 5))
            close(readEnd)
        } else if replies { message.reply(msgid: message.msgid + 1000, components: message.components, before: Date(timeIntervalSinceNow: 5)) }
    }
    owner.loop.add(port, forMode: .default)
    let held = DispatchSemaphore(value: 0)
    if flags.contains("hold") {
        let entered = DispatchSemaphore(value: 0)
        owner.loop.perform { entered.signal(); held.wait() }
        entered.wait()
    }
    let published: PublishedMessagePort
    do { published = try registry.publish(port, as: name, on: owner.loop, options: options) } catch { fail("\(error)") }
    published.setPeerDisconnectHandler { _, reason in say("GONE \(reason)") }
    say("READY \(getpid())")
    var savedLimit = rlimit()
    while let line = readLine() {
        if line == "go" { held.signal() }
        if line == "stats" { say("STATS \(published.statistics)") }
        if line == "cpu" {
            // The process's CPU time so far (user and system), in microseconds.
            var usage = rusage()
            guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { fail("getrusage: \(errno)") }
            let micros = (Int(usage.ru_utime.tv_sec) + Int(usage.ru_stime.tv_sec)) * 1_000_000
                + Int(usage.ru_utime.tv_usec) + Int(usage.ru_stime.tv_usec)
            say("CPU \(micros)")
        }
        if line == "invalidate" { port.invalidate(); say("INVALIDATED") }
        if line == "fdlimit" {
            // The lowest free descriptor number: every one below it is open, so with the soft
            // limit there no new descriptor can be made.
            let lowestFree = dup(0)
            guard lowestFree >= 0 else { fail("dup: \(errno)") }
            close(lowestFree)
            guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &savedLimit) == 0 else { fail("getrlimit: \(errno)") }
            var limited = savedLimit
            limited.rlim_cur = rlim_t(lowestFree)
            guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limited) == 0 else { fail("setrlimit: \(errno)") }
            say("LIMITED \(lowestFree)")
        }
        if line == "fdunlimit" {
            guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &savedLimit) == 0 else { fail("setrlimit: \(errno)") }
            say("UNLIMITED")
        }
    }
    published.unpublish()
    exit(0)

case "send":
    guard arguments.count >= 6, let count = Int(arguments[4]), let timeoutMs = Int(arguments[5]) else { fail("bad send arguments") }
    let size = arguments.count > 6 ? Int(arguments[6]) ?? 0 : 0
    let remote: MessagePort
    do { remote = try registry.remotePort(named: name) } catch { fail("\(error)") }
    say("CONNECTED")
    var sent = 0
    var refused = 0
    var index = 0
    while count < 0 || index < count {
        let components = size > 0 ? [Data(repeating: UInt8(index & 0xFF), count: size)] : []
        if remote.send(before: Date(timeIntervalSinceNow: Double(timeoutMs) / 1000), msgid: UInt32(index), components: components) {
            sent += 1
            say("SENT \(index)")
        } else {
            refused += 1
            say("REFUSED \(index)")
        }
        index += 1
    }
    say("DONE \(sent) \(refused)")
    say("VALID \(remote.isValid ? 1 : 0)")
    exit(0)

case "request":
    guard arguments.count >= 6, let sendMs = Int(arguments[4]), let receiveMs = Int(arguments[5]) else { fail("bad request arguments") }
    let remote: MessagePort
    do { remote = try registry.remotePort(named: name) } catch { fail("\(error)") }
    do {
        let reply = try remote.sendRequest(msgid: 7, components: [Data("ping".utf8)],
                                           sendTimeout: .milliseconds(sendMs), receiveTimeout: .milliseconds(receiveMs))
        say("REPLY \(reply.msgid) \(String(decoding: reply.components.first ?? Data(), as: UTF8.self))")
    } catch {
        say("ERROR \(error)")
    }
    exit(0)

case "sendfd":
    guard arguments.count >= 5 else { fail("bad sendfd arguments") }
    let remote: MessagePort
    do { remote = try registry.remotePort(named: name) } catch { fail("\(error)") }
    let readEnd = pipeHolding(arguments[4])
    let sent = remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 1, fileDescriptors: [readEnd])
    close(readEnd)
    say(sent ? "SENT" : "REFUSED")
    exit(0)

default:
    fail("unknown command \(arguments[1])")
}
