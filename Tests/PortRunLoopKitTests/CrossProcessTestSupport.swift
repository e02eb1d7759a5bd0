#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// The `CrossProcessProbe` program (Tests/Probes/CrossProcessProbe), built next to the test bundle,
/// with its standard input and output on pipes; a thread of its own reads the output line by line.
/// Every wait is bounded; none is used for ordering.
final class CrossProcessProbeProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let lock = NSLock()
    private var lines: [String] = [] // guarded by `lock`
    private var partial = "" // guarded by `lock`
    private let changed = NSCondition()
    private let exited = Signal()

    /// The probe's path, or nil when it was not built.
    static var executable: URL {
        Bundle.main.executableURL!.deletingLastPathComponent().appendingPathComponent("CrossProcessProbe")
    }

    /// Starts the probe with `arguments`, optionally through a launcher (`setpriv …`).
    init(_ arguments: [String], launcher: [String] = []) throws {
        let probe = Self.executable
        guard FileManager.default.isExecutableFile(atPath: probe.path) else {
            throw CrossProcessProbeMissing(path: probe.path)
        }
        if launcher.isEmpty {
            process.executableURL = probe
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: launcher[0])
            process.arguments = Array(launcher.dropFirst()) + [probe.path] + arguments
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.terminationHandler = { [exited] _ in exited.fire() }
        try process.run()
        let reading = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                received(String(decoding: data, as: UTF8.self))
            }
        }
    }

    var processID: Int32 { process.processIdentifier }

    /// Every complete line printed so far.
    var printed: [String] { lock.withLock { lines } }

    /// Waits (at most `seconds`) until a line starting with `prefix` was printed; returns it.
    @discardableResult
    func waitForLine(startingWith prefix: String, seconds: Double = 30) -> String? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        changed.lock()
        defer { changed.unlock() }
        while true {
            if let line = lock.withLock({ lines.first { $0.hasPrefix(prefix) } }) { return line }
            if !changed.wait(until: deadline) { return lock.withLock { lines.first { $0.hasPrefix(prefix) } } }
        }
    }

    /// The lines starting with `prefix`.
    func lines(startingWith prefix: String) -> [String] { printed.filter { $0.hasPrefix(prefix) } }

    /// Writes `command` to the probe's standard input and waits (at most `seconds`) for the answer:
    /// the next line starting with `prefix` printed after the lines already there.
    func ask(_ command: String, answerStartsWith prefix: String, seconds: Double = 10) -> String? {
        let before = lines(startingWith: prefix).count
        tell(command)
        let deadline = Date(timeIntervalSinceNow: seconds)
        changed.lock()
        defer { changed.unlock() }
        while true {
            let answers = lines(startingWith: prefix)
            if answers.count > before { return answers[before] }
            if !changed.wait(until: deadline) { return nil }
        }
    }

    /// Writes a line to the probe's standard input.
    func tell(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Closes the probe's standard input (a publishing probe then unpublishes and exits).
    func closeInput() { try? input.fileHandleForWriting.close() }

    /// Sends `signal` to the probe.
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits (at most `seconds`) for the probe to exit; its status, or nil after killing it.
    @discardableResult
    func waitForExit(seconds: Double = 30) -> Int32? {
        guard exited.wait(seconds: seconds) else {
            kill(process.processIdentifier, SIGKILL)
            _ = exited.wait(seconds: 10)
            return nil
        }
        return process.terminationStatus
    }

    /// Kills the probe (SIGKILL) and waits for it to be gone.
    func kill9() {
        send(SIGKILL)
        _ = exited.wait(seconds: 30)
    }

    private func received(_ text: String) {
        lock.withLock {
            partial += text
            while let newline = partial.firstIndex(of: "\n") {
                lines.append(String(partial[..<newline]))
                partial = String(partial[partial.index(after: newline)...])
            }
        }
        changed.lock()
        changed.broadcast()
        changed.unlock()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// The probe program was not built.
struct CrossProcessProbeMissing: Error, CustomStringConvertible {
    let path: String
    var description: String { "CrossProcessProbe was not built at \(path) (build the package first)" }
}

/// A fresh name directory (mode 0700) under /tmp, removed by ``remove()``.
struct NameDirectory: Sendable {
    let path: String

    init() {
        var template = Array("/tmp/prl-xproc-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: made!)
    }

    var registry: MessagePortNameRegistry { MessagePortNameRegistry(directory: path) }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Connects a raw `SOCK_SEQPACKET` socket to a published name (to write hand-made frames).
func rawConnection(to directory: NameDirectory, name: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
    precondition(fd >= 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let path = Array((directory.path + "/" + name + ".sock").utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.enumerated() { raw[index] = byte }
    }
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    precondition(rc == 0, "connect failed: errno \(errno)")
    return fd
}

/// Writes a message frame (no components, no reply) for each of `msgids` to a raw socket.
func sendRawMessages<IDs: Sequence<UInt32>>(_ msgids: IDs, to fd: Int32) {
    for msgid in msgids {
        let frame = CrossProcessFrame(kind: .message, msgid: msgid).encoded()
        #expect(frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == frame.count)
    }
}

/// Reads one frame from a raw socket (a hand-made peer's end), waiting at most 10 s.
func readRawFrame(_ fd: Int32) -> CrossProcessFrame? {
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    guard poll(&entry, 1, 10_000) == 1 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { return nil }
    return Array(buffer[0..<count]).withUnsafeBytes { try? CrossProcessFrame.parse($0) }
}

/// Sends on a raw connection what a sender sends before its first frame with descriptors
/// (``CrossProcessFrame/Kind/descriptors``).
func announceDescriptors(on fd: Int32) {
    let frame = CrossProcessFrame.descriptorsFrame
    #expect(frame.withUnsafeBytes { System.sendFrame(fd, $0) } == .done(frame.count))
}

/// Reads the next frame of a raw connection within 10 seconds (`recvmsg`: its descriptors, if
/// any, come with it, owned). Nil when none came or it did not parse.
func readFrame(from fd: Int32) -> (frame: CrossProcessFrame, descriptors: [TransferredFileDescriptor])? {
    guard !System.poll(fd, for: .readable, untilMonotonic: System.monotonicSeconds() + 10).isEmpty else { return nil }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 8)
    let control = UnsafeMutableRawBufferPointer.allocate(byteCount: System.descriptorControlSize(16), alignment: 8)
    defer { buffer.deallocate(); control.deallocate() }
    var count: Int32 = 0
    guard case .done(let length) = System.receiveFrame(fd, into: buffer, control: control, descriptorCount: &count) else { return nil }
    let descriptors = count > 0 ? System.takeDescriptors(control.baseAddress!, count: Int(count)) : []
    guard let frame = try? CrossProcessFrame.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<length])) else { return nil }
    return (frame, descriptors)
}

/// Sends `frame` on a raw connection, carrying `descriptors` (`SCM_RIGHTS`) when there are any,
/// and expects it to go out whole at once.
func sendRawFrame(_ frame: CrossProcessFrame, descriptors: [Int32] = [], to fd: Int32) {
    let bytes = frame.encoded()
    let sent = bytes.withUnsafeBytes { bytes in
        descriptors.isEmpty ? System.sendFrame(fd, bytes)
            : descriptors.withUnsafeBufferPointer { System.sendFrame(fd, bytes, descriptors: $0) }
    }
    #expect(sent == .done(bytes.count))
}

/// A remote port over a socket pair with `credits`, and the publisher's end (the test plays the
/// publisher). `readingOn`: a loop that reads the connection as it becomes readable.
/// `invalidatedByItsEnd`: the connection's end invalidates the port, as the name registry's
/// remote ports are.
func makePairedRemotePort(credits: Int, readingOn loop: PortRunLoop? = nil,
                          invalidatedByItsEnd: Bool = false) throws -> (MessagePort, Int32) {
    var ends: [Int32] = [-1, -1]
    let rc = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends)
    #expect(rc == 0)
    let connection = RemoteConnection(fd: ends[0], wakeFD: try System.makeEventfd(), name: "pair", options: CrossProcessPortOptions(),
                                      parameters: PublisherParameters(credits: credits, maximumFrameSize: 4096),
                                      logger: .portRunLoopDisabled)
    let port = MessagePort(remote: connection, logger: nil)
    if invalidatedByItsEnd { connection.setEndObserver { [weak port] reason in port?.invalidate(reason: reason) } }
    if let loop { try connection.startReading(on: loop) }
    return (port, ends[1])
}

/// A port of this process published on a loop thread of its own, recording the msgids its handler
/// sees and each peer's disconnect (bounded waits for both). `refusal` starts the thread under a
/// ``SyscallRefusal``; `handler` runs after the msgid is recorded (by default it takes nothing, so
/// a message's descriptors close with it); `schedule: false` leaves the port out of the loop.
final class TestPublisher: @unchecked Sendable {
    let thread: RunLoopThread
    let port: MessagePort
    let published: PublishedMessagePort
    let received = Recorder<UInt32>()
    private let arrived = DispatchSemaphore(value: 0)
    let disconnects = Recorder<CrossProcessPeer.DisconnectReason>()
    private let disconnected = DispatchSemaphore(value: 0)

    init(_ directory: NameDirectory, name: String, options: CrossProcessPortOptions = CrossProcessPortOptions(),
         queueLimit: Int = 5, schedule: Bool = true, refusal: SyscallRefusal? = nil,
         handler: @escaping @Sendable (MessagePort.Message) -> Void = { _ in }) throws {
        thread = try refusal.map { try onRefusingThread($0) { try RunLoopThread(name: "xproc-owner") } }
            ?? RunLoopThread(name: "xproc-owner")
        port = MessagePort(queueLimit: queueLimit)
        port.setHandler { [received, arrived] message in
            received.append(message.msgid)
            arrived.signal()
            handler(message)
        }
        if schedule { thread.loop.add(port, forMode: .default) }
        published = try directory.registry.publish(port, as: name, on: thread.loop, options: options)
        published.setPeerDisconnectHandler { [disconnects, disconnected] _, reason in
            disconnects.append(reason)
            disconnected.signal()
        }
    }

    /// Waits (at most 10 s) for the next peer to disconnect.
    func waitForDisconnect() -> Bool { disconnected.wait(timeout: .now() + 10) == .success }

    /// Waits (at most 10 s each) until `count` more messages were handled.
    func waitForMessages(_ count: Int) -> Bool {
        (0..<count).allSatisfy { _ in arrived.wait(timeout: .now() + 10) == .success }
    }

    func stop() {
        published.unpublish()
        thread.stop()
    }
}

/// Whether a raw socket reads end of file within `seconds` (`SO_RCVTIMEO`): the other side closed
/// it, rather than the wait timing out or a byte arriving.
func readsEndOfFile(_ fd: Int32, within seconds: Int = 10) -> Bool {
    var patience = timeval(tv_sec: seconds, tv_usec: 0)
    guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size)) == 0 else { return false }
    var byte: UInt8 = 0
    return recv(fd, &byte, 1, 0) == 0
}

/// Which end of a Unix socket at a published name's path ``socketDescriptors(at:_:)`` looks for.
enum SocketEnd {
    /// The listening socket bound to the path.
    case listener
    /// A connection the listener accepted (bound to the path too, and not listening).
    case accepted
    /// A client's end, connected to the path.
    case client
}

/// This process's descriptors (by `/proc/self/fd`) that are the `end` of a Unix socket at `path`:
/// what a test learns before it makes the kernel refuse calls on one of them.
func socketDescriptors(at path: String, _ end: SocketEnd) -> [Int32] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return names.compactMap { Int32($0) }.sorted().filter { fd in
        switch end {
        case .listener: unixSocketPath(of: fd, peer: false) == path && isListening(fd) == true
        case .accepted: unixSocketPath(of: fd, peer: false) == path && isListening(fd) == false
        case .client: unixSocketPath(of: fd, peer: true) == path
        }
    }
}

/// The path a Unix socket is bound to (`getsockname`) or connected to (`getpeername`, `peer`);
/// nil for another kind of fd or an unnamed socket.
private func unixSocketPath(of fd: Int32, peer: Bool) -> String? {
    var address = sockaddr_un()
    var length = socklen_t(MemoryLayout<sockaddr_un>.size)
    let rc = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length) }
    }
    let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
    guard rc == 0, address.sun_family == sa_family_t(AF_UNIX), Int(length) > pathOffset else { return nil }
    let bytes = withUnsafeBytes(of: address.sun_path) { Array($0.prefix(Int(length) - pathOffset).prefix { $0 != 0 }) }
    return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
}

/// Whether a socket listens (`SO_ACCEPTCONN`); nil when that cannot be read.
private func isListening(_ fd: Int32) -> Bool? {
    var value: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) == 0 else { return nil }
    return value != 0
}

/// A port scheduled on `loop` (its handler does nothing), published as `name` by a registry that
/// logs to a fresh recorder: for the tests that check what a publication logs.
func publishRecordingLog(_ directory: NameDirectory, as name: String, on loop: PortRunLoop) throws
    -> (port: MessagePort, published: PublishedMessagePort, log: LogRecorder) {
    let log = LogRecorder()
    let port = MessagePort()
    port.setHandler { _ in }
    loop.add(port, forMode: .default)
    let published = try MessagePortNameRegistry(directory: directory.path, logger: log.logger).publish(port, as: name, on: loop)
    return (port, published, log)
}

/// A port scheduled in one loop thread (`owner`) and published under `name` on another's loop
/// (`publishing`, which the test stops): a publication whose end is its publishing loop's, not its
/// port's.
struct PublishedElsewhere {
    let owner: RunLoopThread
    let publishing: RunLoopThread
    let port: MessagePort
    let published: PublishedMessagePort

    init(_ directory: NameDirectory, as name: String) throws {
        owner = try RunLoopThread(name: "xproc-port-owner")
        publishing = try RunLoopThread(name: "xproc-publishing")
        port = MessagePort()
        owner.loop.add(port, forMode: .default)
        published = try directory.registry.publish(port, as: name, on: publishing.loop)
    }
}
