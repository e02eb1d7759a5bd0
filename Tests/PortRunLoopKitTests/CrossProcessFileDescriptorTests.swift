#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// File descriptors carried by cross-process messages (`SCM_RIGHTS`): passed to another process and
/// read there, carried by a reply, the limit, hostile announcements, and every descriptor closed
/// when its message is refused or discarded (X11).
@Suite(.serialized) struct CrossProcessFileDescriptorTests {
    /// The read end of a pipe holding `text` (its write end closed).
    static func pipeHolding(_ text: String) -> Int32 {
        var ends: [Int32] = [0, 0]
        precondition(pipe(&ends) == 0)
        let bytes = Array(text.utf8)
        precondition(write(ends[1], bytes, bytes.count) == bytes.count)
        close(ends[1])
        return ends[0]
    }

    /// Reads `fd` to end of file (does not close it).
    static func readAll(_ fd: Int32) -> String {
        var result = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            result += buffer[0..<count]
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The pipe `fd` is an end of (its inode).
    static func pipeID(_ fd: Int32) -> UInt64 {
        var info = stat()
        precondition(fstat(fd, &info) == 0)
        return UInt64(info.st_ino)
    }

    /// How many descriptors of this process (from /proc/self/fd) refer to the pipes `pipes`:
    /// unaffected by whatever else the process opens meanwhile.
    static func openDescriptors(of pipes: Set<UInt64>) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter { entry in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                  target.hasPrefix("pipe:["), let id = UInt64(target.dropFirst(6).dropLast()) else { return false }
            return pipes.contains(id)
        }.count
    }

    typealias Publisher = TestPublisher

    @Test func aPipesReadEndPassedToAnotherProcessIsReadThere() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "fd-reader", "5"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "fd-reader")
        let first = Self.pipeHolding("hello across")
        let second = Self.pipeHolding("and again")
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 4, fileDescriptors: [first, second]))
        #expect(publisher.waitForLine(startingWith: "FD") == "FD 2 hello across|and again")
        // The sender kept its own descriptors (the kernel passed duplicates).
        #expect(fcntl(first, F_GETFD) >= 0 && fcntl(second, F_GETFD) >= 0)
        close(first)
        close(second)
    }

    @Test func aReplyCarriesAFileDescriptorAndARequestCarriesOne() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "fd-replier", "5", "replyfd"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "fd-replier")
        let readEnd = Self.pipeHolding("ping")
        let reply = try remote.sendRequest(msgid: 9, fileDescriptors: [readEnd], sendTimeout: .seconds(10), receiveTimeout: .seconds(10))
        close(readEnd)
        #expect(publisher.waitForLine(startingWith: "FD") == "FD 1 ping")
        #expect(reply.msgid == 2009)
        #expect(reply.fileDescriptors.count == 1)
        guard let fd = reply.fileDescriptors.first?.take() else { return }
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0) // received close-on-exec
        #expect(Self.readAll(fd) == "pong")
        close(fd)
        #expect(reply.fileDescriptors.first?.take() == nil) // taken once
    }

    @Test func theAsyncRequestCarriesAFileDescriptorToo() async throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "fd-async", "5", "replyfd"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let remote = try directory.registry.remotePort(named: "fd-async")
        let readEnd = Self.pipeHolding("async ping")
        let reply = try await remote.sendRequest(msgid: 1, fileDescriptors: [readEnd], sendTimeout: .seconds(10),
                                                 receiveTimeout: .seconds(10))
        close(readEnd)
        #expect(publisher.waitForLine(startingWith: "FD") == "FD 1 async ping")
        #expect(reply.msgid == 2001)
        guard let fd = reply.fileDescriptors.first?.take() else {
            Issue.record("the reply carried no descriptor")
            return
        }
        #expect(Self.readAll(fd) == "pong")
        close(fd)
    }

    @Test func aProcessPassesAFileDescriptorToThisOne() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let thread = try RunLoopThread(name: "xproc-fd-receiver")
        defer { thread.stop() }
        let port = MessagePort()
        let texts = Recorder<String>()
        let arrived = DispatchSemaphore(value: 0)
        port.setHandler { message in
            if let fd = message.fileDescriptors.first?.take() {
                texts.append(Self.readAll(fd))
                close(fd)
            }
            arrived.signal()
        }
        thread.loop.add(port, forMode: .default)
        let published = try directory.registry.publish(port, as: "fd-here", on: thread.loop)
        defer { published.unpublish() }
        let sender = try CrossProcessProbeProcess(["sendfd", directory.path, "fd-here", "from the probe"])
        #expect(sender.waitForLine(startingWith: "SENT") == "SENT")
        #expect(arrived.wait(timeout: .now() + 10) == .success)
        #expect(texts.values == ["from the probe"])
    }

    @Test func moreDescriptorsThanTheLimitAreRefusedBeforeSending() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Publisher(directory, name: "fd-limit")
        defer { publisher.stop() }
        let remote = try directory.registry.remotePort(named: "fd-limit",
                                                       options: CrossProcessPortOptions(maximumFileDescriptorsPerMessage: 2))
        let fds = (0..<3).map { _ in Self.pipeHolding("x") }
        defer { fds.forEach { close($0) } }
        #expect(!remote.send(before: Date(timeIntervalSinceNow: 1), fileDescriptors: fds))
        #expect(throws: CrossProcessPortError.tooManyFileDescriptors(count: 3, limit: 2)) {
            _ = try remote.sendRequest(fileDescriptors: fds, sendTimeout: .seconds(1), receiveTimeout: .seconds(1))
        }
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), fileDescriptors: Array(fds.prefix(2))))
        #expect(remote.isValid)
        #expect(publisher.published.statistics.framesRejected == 0)
    }

    /// Frames whose announcement and `SCM_RIGHTS` disagree, or that bring more than the
    /// publisher's limit, from a raw client: each disconnects its peer, is counted, and every
    /// descriptor that arrived is closed.
    @Test(arguments: [(announced: 2, carried: 0), (announced: 0, carried: 1), (announced: 1, carried: 2), (announced: 3, carried: 3)])
    func aFrameWhoseDescriptorsDisagreeWithItsAnnouncementIsAViolation(announced: Int, carried: Int) throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Publisher(directory, name: "fd-liar", options: CrossProcessPortOptions(maximumFileDescriptorsPerMessage: 2))
        defer { publisher.stop() }
        let fds = (0..<carried).map { _ in Self.pipeHolding("x") }
        let pipes = Set(fds.map(Self.pipeID))
        let fd = rawConnection(to: directory, name: "fd-liar")
        announceDescriptors(on: fd)
        sendRawFrame(CrossProcessFrame(kind: .message, msgid: 1, descriptorCount: UInt8(announced)), descriptors: fds, to: fd)
        fds.forEach { close($0) }
        #expect(publisher.waitForDisconnect())
        guard case .protocolViolation(let why) = publisher.disconnects.values.first else {
            Issue.record("expected a protocol violation, got \(publisher.disconnects.values)")
            return
        }
        #expect(why.contains("file descriptors"))
        #expect(publisher.published.statistics.framesRejected == 1)
        close(fd)
        // The pipes' ends this test made are closed, and so is every copy the publisher received.
        #expect(eventually { Self.openDescriptors(of: pipes) == 0 })
    }

    /// The frames of one batch (`recvmmsg`) after a violating one are never delivered, and their
    /// descriptors are closed: the publisher's loop is held while a raw client sends a good frame,
    /// a liar and another good frame, so all three are read in one call.
    @Test func descriptorsOfFramesAfterAViolationInTheSameBatchAreClosed() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Publisher(directory, name: "fd-batch")
        defer { publisher.stop() }
        let entered = Signal()
        let release = DispatchSemaphore(value: 0)
        publisher.thread.loop.perform { entered.fire(); release.wait() }
        #expect(entered.wait(seconds: 10))
        let fds = (0..<3).map { _ in Self.pipeHolding("x") }
        let pipes = Set(fds.map(Self.pipeID))
        let fd = rawConnection(to: directory, name: "fd-batch")
        announceDescriptors(on: fd)
        for (index, announced) in [1, 0, 1].enumerated() { // the middle frame hides its descriptor
            sendRawFrame(CrossProcessFrame(kind: .message, msgid: UInt32(index), descriptorCount: UInt8(announced)),
                         descriptors: [fds[index]], to: fd)
        }
        fds.forEach { close($0) }
        release.signal()
        #expect(publisher.waitForDisconnect())
        #expect(publisher.published.statistics.framesRejected == 1)
        #expect(publisher.published.statistics.messagesReceived <= 1) // never the frame after the liar
        close(fd)
        #expect(eventually { Self.openDescriptors(of: pipes) == 0 })
    }

    /// A descriptor sent to a reply port (a local port passed in `from:`) comes back over the
    /// connection to that port's handler, on its owner's thread.
    @Test func aDescriptorSentToAReplyPortArrivesAtTheLocalPort() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try CrossProcessProbeProcess(["publish", directory.path, "fd-routed", "5", "replyfd"])
        defer { publisher.kill9() }
        #expect(publisher.waitForLine(startingWith: "READY") != nil)
        let thread = try RunLoopThread(name: "xproc-fd-routed")
        defer { thread.stop() }
        let replyPort = MessagePort()
        let answers = Recorder<(msgid: UInt32, text: String, onOwner: Bool)>()
        let answered = Signal()
        let loop = thread.loop
        replyPort.setHandler { message in
            let text = message.fileDescriptors.first?.take().map { fd in
                defer { close(fd) }
                return Self.readAll(fd)
            } ?? "(none)"
            answers.append((message.msgid, text, loop.isCurrentThread))
            answered.fire()
        }
        thread.loop.add(replyPort, forMode: .default)
        let remote = try directory.registry.remotePort(named: "fd-routed", readingOn: thread.loop)
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: 5, from: replyPort))
        #expect(answered.wait(seconds: 30))
        let values = answers.values
        #expect(values.count == 1)
        #expect(values.first?.msgid == 2005)
        #expect(values.first?.text == "pong")
        #expect(values.first?.onOwner == true)
        remote.invalidate()
    }

    @Test func descriptorsOfMessagesDiscardedByInvalidationAreClosed() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        // Not scheduled in any loop: the messages stay queued in the port.
        let publisher = try Publisher(directory, name: "fd-discard", schedule: false)
        defer { publisher.stop() }
        let remote = try directory.registry.remotePort(named: "fd-discard")
        var pipes = Set<UInt64>()
        for msgid in UInt32(0)..<2 {
            let readEnd = Self.pipeHolding("queued \(msgid)")
            pipes.insert(Self.pipeID(readEnd))
            #expect(remote.send(before: Date(timeIntervalSinceNow: 10), msgid: msgid, fileDescriptors: [readEnd]))
            close(readEnd)
        }
        #expect(eventually { publisher.published.statistics.messagesReceived == 2 })
        #expect(Self.openDescriptors(of: pipes) == 2) // the publisher's copies, queued
        publisher.port.invalidate()
        #expect(eventually { Self.openDescriptors(of: pipes) == 0 })
    }

    @Test func descriptorsAHandlerDoesNotTakeAreClosedAfterIt() throws {
        let directory = NameDirectory()
        defer { directory.remove() }
        let publisher = try Publisher(directory, name: "fd-untaken")
        defer { publisher.stop() }
        let remote = try directory.registry.remotePort(named: "fd-untaken")
        let readEnd = Self.pipeHolding("ignored")
        let pipes: Set = [Self.pipeID(readEnd)]
        #expect(remote.send(before: Date(timeIntervalSinceNow: 10), fileDescriptors: [readEnd]))
        close(readEnd)
        #expect(eventually { publisher.published.statistics.messagesReceived == 1 })
        #expect(eventually { Self.openDescriptors(of: pipes) == 0 })
    }

    @Test func aLocalPortGetsDuplicates() throws {
        let thread = try RunLoopThread(name: "fd-local")
        defer { thread.stop() }
        let port = MessagePort()
        let texts = Recorder<String>()
        let arrived = DispatchSemaphore(value: 0)
        port.setHandler { message in
            if let fd = message.fileDescriptors.first?.fileDescriptor { texts.append(Self.readAll(fd)) }
            arrived.signal()
        }
        thread.loop.add(port, forMode: .default)
        let readEnd = Self.pipeHolding("local")
        #expect(port.send(before: Date(timeIntervalSinceNow: 10), fileDescriptors: [readEnd]))
        #expect(arrived.wait(timeout: .now() + 10) == .success)
        #expect(texts.values == ["local"])
        #expect(fcntl(readEnd, F_GETFD) >= 0)
        close(readEnd)
        #expect(!port.send(before: Date(timeIntervalSinceNow: 1), fileDescriptors: [readEnd])) // closed: cannot be duplicated
    }
}
