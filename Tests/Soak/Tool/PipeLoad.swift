import Foundation
import PortRunLoopKit
import Synchronization

/// File-descriptor sources on pipes: each hub watches the read end of a pipe; a writer thread
/// writes numbered 8-byte records into the write ends (non-blocking: a full pipe is retried, the
/// number kept). Every 10 s each hub replaces its pipe on its own thread: it reads what is left,
/// cancels the source, closes both ends and watches a new pipe; the records must arrive in order,
/// exactly once, across the replacements (F2: readiness makes the handler run).
///
/// Thread-safety: the ``SoakLoad`` members on the main thread; the rest on the threads named.
final class PipeLoad: SoakLoad {
    let name = "pipes"
    private let hubs: SoakHubs
    private let ledger: SoakLedger
    private let stopFlag = StopFlag()
    private let rate: Double
    private var channels: [PipeChannel] = []
    private var writer: PacedThread?
    private var lastReplaced = 0.0

    init(hubs: SoakHubs, ledger: SoakLedger, rate: Double) {
        self.hubs = hubs
        self.ledger = ledger
        self.rate = rate
    }

    func start() throws {
        for hub in 0..<hubs.count {
            let channel = PipeChannel(hub: hub, loop: hubs[hub], ledger: ledger)
            try hubs[hub].performAndWait { try channel.open() }
            channels.append(channel)
        }
        let channels = self.channels
        writer = PacedThread("soak-pipe-writer", perSecond: 1500 * rate, stop: stopFlag) { step in
            channels[step % channels.count].writeNext()
        }
    }

    func supervise(elapsed: Double) {
        guard elapsed - lastReplaced >= 10 else { return }
        lastReplaced = elapsed
        for channel in channels {
            let ledger = self.ledger
            if !channel.loop.perform({
                do { try channel.replace() } catch { ledger.violation("pipes: hub \(channel.hub) could not replace its pipe: \(error)") }
            }) { ledger.violation("pipes: hub \(channel.hub)'s loop refused a block") }
        }
        ledger.restarted("pipes", channels.count)
    }

    func stop() {
        stopFlag.raise()
        if let writer, !writer.join() { ledger.violation("pipes: the writer did not stop within 60 s") }
        if !waitUntil(seconds: 10, { channels.allSatisfy { $0.check.outstanding == 0 } }) {
            ledger.note("pipes: records still unread 10 s after the writer stopped")
        }
        for channel in channels {
            try? channel.loop.performAndWait { channel.close() }
            channel.check.finish()
        }
    }
}

/// One hub's pipe: the write end under a lock the writer holds for each record, the read end
/// and its source touched only on the hub's thread.
///
/// Thread-safety: `Sendable`; `state` under its lock; `open`, `replace`, `close` and the handler on
/// the hub's thread.
final class PipeChannel: Sendable {
    let hub: Int
    let loop: PortRunLoop
    let check: SequenceCheck
    private let ledger: SoakLedger
    private let state = TracedMutex(State())

    private struct State {
        var readFD: Int32 = -1
        var writeFD: Int32 = -1
        var source: FileDescriptorSource?
        var partial: [UInt8] = []
    }

    init(hub: Int, loop: PortRunLoop, ledger: SoakLedger) {
        self.hub = hub
        self.loop = loop
        self.ledger = ledger
        check = SequenceCheck("pipes: writer → hub \(hub)", ledger: ledger)
    }

    /// Writes the next record, or nothing if the pipe is full (the number is kept for the next).
    func writeNext() {
        state.withLock { state in
            guard state.writeFD >= 0 else { return }
            var record = check.next.littleEndian
            let written = write(state.writeFD, &record, 8)
            if written == 8 {
                check.accepted()
            } else if !(written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { // full: the next write retries
                ledger.violation("pipes: a write to hub \(hub)'s pipe returned \(written), errno \(errno)")
            }
        }
    }

    /// A new pipe, watched. On the hub's thread.
    func open() throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw PipeChannelError.pipe(errno) }
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        let readFD = ends[0]
        let loop = self.loop
        let source = try loop.watch(fileDescriptor: readFD, for: .read) { [self] _ in
            if !loop.isCurrentThread { ledger.violation("pipes: hub \(hub)'s handler ran off its thread") }
            drain(readFD)
        }
        state.withLock { state in
            state.readFD = readFD
            state.writeFD = ends[1]
            state.source = source
        }
    }

    /// Reads every record waiting in `fd`. On the hub's thread.
    private func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { return }
            var bytes = state.withLock { state in
                defer { state.partial.removeAll() }
                return state.partial
            }
            bytes += buffer[0..<count]
            let whole = bytes.count / 8 * 8
            for offset in stride(from: 0, to: whole, by: 8) {
                var value: UInt64 = 0
                withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes[offset..<(offset + 8)]) }
                check.received(UInt64(littleEndian: value))
            }
            if whole < bytes.count { state.withLock { $0.partial = Array(bytes[whole...]) } }
        }
    }

    /// Reads what is left, cancels the source, closes both ends (the writer waits meanwhile), and
    /// opens a new pipe. On the hub's thread.
    func replace() throws {
        close()
        try open()
    }

    /// Reads what is left, cancels the source and closes both ends. On the hub's thread.
    func close() {
        let left: [UInt8]? = state.withLock { state in
            guard state.readFD >= 0 else { return nil }
            state.source?.cancel()
            let readFD = state.readFD
            Foundation.close(state.writeFD)
            state.writeFD = -1
            state.readFD = -1
            state.source = nil
            // Nothing writes now (the lock is held): what the pipe holds is all there will be.
            var buffer = [UInt8](repeating: 0, count: 4096)
            var bytes = state.partial
            state.partial.removeAll()
            while true {
                let count = read(readFD, &buffer, buffer.count)
                if count <= 0 { break }
                bytes += buffer[0..<count]
            }
            Foundation.close(readFD)
            return bytes
        }
        guard let bytes = left else { return }
        for offset in stride(from: 0, to: bytes.count / 8 * 8, by: 8) {
            var value: UInt64 = 0
            withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: bytes[offset..<(offset + 8)]) }
            check.received(UInt64(littleEndian: value))
        }
        if bytes.count % 8 != 0 { ledger.violation("pipes: hub \(hub)'s pipe ended inside a record") }
    }
}

enum PipeChannelError: Error {
    case pipe(Int32)
}
