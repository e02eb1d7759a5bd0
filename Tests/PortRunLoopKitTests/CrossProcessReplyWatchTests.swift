#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// The reader thread's watch of a connection for async requests (`ReplyWatchSet`): the socket is
/// armed (one-shot) only while a task waits for a reply on it, the reader thread arms it again
/// while another task still waits, a reply already in the socket when it is armed is not missed,
/// a task waiting for room in a full socket has it armed for writing and sends once there is room,
/// and a registration or an arming the kernel refuses is a typed error, never a request left
/// waiting. The kernel's own view (`/proc/self/fdinfo` of the set) is checked beside the
/// connection's.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CrossProcessReplyWatchTests {
    /// Whether the kernel has `socket` armed for reading (`EPOLLIN`; with `writing`, for writing,
    /// `EPOLLOUT`) in the epoll instance `epoll`: the `events` mask of its line in
    /// `/proc/self/fdinfo/<epoll>`. Nil when the socket is not in the set.
    private func kernelArmed(_ socket: Int32, in epoll: Int32, writing: Bool = false) -> Bool? {
        guard let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(epoll)", encoding: .utf8) else { return nil }
        for line in info.split(separator: "\n") where line.hasPrefix("tfd:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 4, Int32(fields[1]) == socket, fields[2] == "events:",
                  let events = UInt32(fields[3], radix: 16) else { continue }
            return events & (writing ? 0x004 : 0x001) != 0 // EPOLLOUT, EPOLLIN
        }
        return nil
    }

    /// The kernel's and the connection's view agree that the socket is armed (or not).
    private func armed(_ connection: RemoteConnection) -> Bool? {
        let state = connection.asyncWatchState
        guard let epoll = state.epoll, let kernel = kernelArmed(state.socket, in: epoll) else { return nil }
        return kernel == state.armed ? kernel : nil
    }

    /// An async request in a task of its own on `loop`'s thread (not the shared pool, which the
    /// test's own blocking reads and other suites may hold): the reply's msgid, or the error it
    /// ended with. Its timeouts are longer than the suite's time limit: the test's own task may
    /// be resumed late on a loaded machine, and the request must still be waiting then.
    private func request(_ port: MessagePort, msgid: UInt32, on loop: PortRunLoop)
        -> Task<Result<UInt32, CrossProcessPortError>, Never> {
        Task(executorPreference: loop.taskExecutor) {
            do throws(CrossProcessPortError) {
                return .success(try await port.sendRequest(msgid: msgid, sendTimeout: .seconds(600), receiveTimeout: .seconds(600)).msgid)
            } catch {
                return .failure(error)
            }
        }
    }

    /// A paired remote port, and a loop thread on which the kernel refuses `refusal(socket)` for
    /// the port's socket. The reader thread is made first: a thread made on the refusing thread
    /// would inherit the refusal.
    private func refusingCaller(named name: String, _ refusal: (Int32) -> SyscallRefusal) throws
        -> (MessagePort, Int32, RemoteConnection, RunLoopThread) {
        _ = try RequestReaderThread.watchSet()
        let (port, peer) = try makePairedRemotePort(credits: 8, invalidatedByItsEnd: true)
        let connection = try #require(port.remote as? RemoteConnection)
        let caller = try RunLoopThread(name: name)
        let refused = refusal(connection.asyncWatchState.socket)
        try caller.loop.performAndWait { try refused.installOnCurrentThread() }
        return (port, peer, connection, caller)
    }

    @Test func aWaitingTaskArmsTheSocketAndTheReaderThreadArmsItAgainForTheNext() async throws {
        let (port, peer) = try makePairedRemotePort(credits: 8, invalidatedByItsEnd: true)
        defer { port.invalidate(); close(peer) }
        let connection = try #require(port.remote as? RemoteConnection)
        let caller = try RunLoopThread(name: "requests")
        defer { caller.stop() }
        let first = request(port, msgid: 1, on: caller.loop)
        let second = request(port, msgid: 2, on: caller.loop)
        // Both requests went out; the request ids by msgid.
        let frames = (0..<2).compactMap { _ in readRawFrame(peer) }
        let ids = Dictionary(uniqueKeysWithValues: frames.map { ($0.msgid, $0.firstID) })
        #expect(ids.count == 2)
        // Both tasks wait, and the socket is armed for them (once).
        #expect(eventually { connection.asyncWatchState.tasksWaiting == 2 && armed(connection) == true })
        // The first reply: the reader thread, woken, resumes its task and arms the socket again
        // for the second, which still waits.
        sendRawFrame(CrossProcessFrame(kind: .reply, msgid: 1001, firstID: ids[1] ?? 0), to: peer)
        #expect(await first.value == .success(1001))
        #expect(eventually { connection.asyncWatchState.tasksWaiting == 1 && armed(connection) == true })
        sendRawFrame(CrossProcessFrame(kind: .reply, msgid: 1002, firstID: ids[2] ?? 0), to: peer)
        #expect(await second.value == .success(1002))
        // Nobody waits: the one-shot arming was spent on the reply, and nothing armed it again.
        #expect(connection.asyncWatchState.tasksWaiting == 0)
        #expect(armed(connection) == false)
        #expect(port.isValid)
    }

    @Test func aReplyAlreadyInTheSocketWhenTheTaskWaitsIsNotMissed() async throws {
        let (port, peer) = try makePairedRemotePort(credits: 20, invalidatedByItsEnd: true) // one per request
        defer { port.invalidate(); close(peer) }
        let connection = try #require(port.remote as? RemoteConnection)
        // Request ids start at 1: each reply is in the socket before its request is sent, so
        // the task finds it read by its spin or, suspended, reported as it arms the socket.
        for id in 1...20 as ClosedRange<UInt64> {
            sendRawFrame(CrossProcessFrame(kind: .reply, msgid: UInt32(id) + 1000, firstID: id), to: peer)
            let caller = try RunLoopThread(name: "fresh-caller") // a thread whose spin has earned nothing
            #expect(await request(port, msgid: UInt32(id), on: caller.loop).value == .success(UInt32(id) + 1000))
            caller.stop()
            #expect(readRawFrame(peer)?.firstID == id)
        }
        #expect(connection.asyncWatchState.tasksWaiting == 0)
        #expect(armed(connection) == false)
    }

    @Test func aRegistrationTheKernelRefusesFailsTheRequestBeforeItIsSent() async throws {
        let (port, peer, connection, caller) = try refusingCaller(named: "no-epoll-add") { .epollAddOf(fileDescriptor: $0, errno: ENOMEM) }
        defer { port.invalidate(); close(peer); caller.stop() }
        #expect(await request(port, msgid: 1, on: caller.loop).value == .failure(.systemCallFailed("epoll_ctl", errno: ENOMEM)))
        #expect(connection.asyncWatchState.token == nil)
        var entry = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
        #expect(poll(&entry, 1, 0) == 0) // nothing was sent
        // The next async request, from a thread the kernel serves, registers the socket and is answered.
        sendRawFrame(CrossProcessFrame(kind: .reply, msgid: 1002, firstID: 1), to: peer)
        let served = try RunLoopThread(name: "epoll-add-allowed")
        defer { served.stop() }
        #expect(await request(port, msgid: 2, on: served.loop).value == .success(1002))
        #expect(connection.asyncWatchState.token != nil)
        #expect(port.isValid)
    }

    @Test func anArmingTheKernelRefusesEndsTheConnectionWithTheError() async throws {
        let (port, peer, _, caller) = try refusingCaller(named: "no-epoll-mod") { .epollModifyOf(fileDescriptor: $0, errno: ENOMEM) }
        defer { port.invalidate(); close(peer); caller.stop() }
        // No reply comes: the task waits, and the arming of the socket for it is refused. Nothing
        // would read the reply, so the connection ends with the error rather than leave the task
        // to its receive timeout.
        #expect(await request(port, msgid: 1, on: caller.loop).value == .failure(.systemCallFailed("epoll_ctl", errno: ENOMEM)))
        #expect(readRawFrame(peer)?.msgid == 1) // the request went out first
        #expect(eventually { !port.isValid })
        #expect(readsEndOfFile(peer))
    }

    @Test func aTaskWaitingForRoomInTheSocketArmsItForWritingAndSendsOnceThereIsRoom() async throws {
        let (port, peer) = try makePairedRemotePort(credits: 10_000, invalidatedByItsEnd: true)
        defer { port.invalidate(); close(peer) }
        let connection = try #require(port.remote as? RemoteConnection)
        // Credits to spare, but the socket full: nobody reads the publisher's end.
        var queued = 0
        while queued < 10_000, port.send(before: Date(), msgid: 1, components: [Data(count: 3_000)]) { queued += 1 }
        #expect(queued > 0 && queued < 10_000)
        let caller = try RunLoopThread(name: "room")
        defer { caller.stop() }
        let waiting = request(port, msgid: 77, on: caller.loop)
        #expect(eventually {
            let state = connection.asyncWatchState
            guard state.tasksWaiting == 1, let epoll = state.epoll else { return false }
            return kernelArmed(state.socket, in: epoll, writing: true) == true
        })
        // The publisher's end reads what filled the socket: there is room, the reader thread is
        // told, and the task sends its request.
        for _ in 0..<queued { #expect(readRawFrame(peer)?.msgid == 1) }
        let requestFrame = readRawFrame(peer)
        #expect(requestFrame?.msgid == 77)
        sendRawFrame(CrossProcessFrame(kind: .reply, msgid: 1077, firstID: requestFrame?.firstID ?? 0), to: peer)
        #expect(await waiting.value == .success(1077))
        #expect(connection.asyncWatchState.tasksWaiting == 0)
    }
}
