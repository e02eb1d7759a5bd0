#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PortRunLoopKit
import Synchronization

/// One fd source of a stress round: a pipe or an `AF_UNIX` stream socketpair, both ends
/// non-blocking, whose read end is watched on a consumer's loop. Producers write records into the
/// write end under ``writer``'s lock, so the bytes logged there are exactly the pipe's byte stream;
/// the handler reads on the consumer's thread — until `EAGAIN` (*eager*) or one 16-byte read per
/// call, leaving the rest for the next turn (*lazy*, so the fd stays ready turn after turn) — and
/// logs what it read in ``records``.
///
/// Both fds stay open until the round ends (every consumer thread joined, so no handler can be
/// reading): ``closeFileDescriptors()`` closes them under the writer lock.
///
/// Thread-safety: `Sendable`; the write end is used under ``writer``'s lock, the read end only by
/// the handler on the consumer's thread.
final class StressPipe: Sendable {
    enum Kind: String, Sendable { case pipe, socketpair }
    enum Reading: String, Sendable { case eager, lazy }

    /// The write side's log, guarded by the writer lock.
    struct Written: Sendable {
        /// Every byte written, in write order: the pipe's byte stream.
        var bytes: [UInt8] = []
        /// Length of ``bytes`` when the canceller sealed the pipe: its cancellation point. Producer
        /// writes are refused from then on; the canceller may still write (to leave the fd ready).
        var sealedAt: Int?
        var writes = 0, refused = 0, full = 0, partial = 0
        var errors: [String] = []
        var closed = false
    }

    static let lazyChunk = 16

    let id: Int
    let consumer: StressConsumer
    let kind: Kind
    let reading: Reading
    let modes: [RunLoop.Mode]
    let readFD: Int32
    let writeFD: Int32
    let writer: Locked<Written>
    let records = StressPipeRecords()
    let source: FileDescriptorSource?
    /// Why `watch` threw, if it did.
    let watchError: PortRunLoopError?

    /// Opens the fds and watches the read end on `consumer`'s loop from the calling thread. Nil when
    /// the fds cannot be created (`errno` in `failure`).
    init?(id: Int, consumer: StressConsumer, kind: Kind, reading: Reading, modes: [RunLoop.Mode], failure: inout String?) {
        var fds: [Int32] = [-1, -1]
        switch kind {
        case .pipe:
            guard pipe(&fds) == 0 else { failure = "pipe() failed, errno \(errno)"; return nil }
            for fd in fds {
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
        case .socketpair:
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { failure = "socketpair() failed, errno \(errno)"; return nil }
        }
        self.id = id
        self.consumer = consumer
        self.kind = kind
        self.reading = reading
        self.modes = modes
        self.readFD = fds[0]
        self.writeFD = fds[1]
        self.writer = Locked(Written())
        let handler = Self.handler(records: records, fd: fds[0], reading: reading, loopID: consumer.loopID)
        do {
            source = try consumer.loop.watch(fileDescriptor: fds[0], for: .read, inModes: modes, handler: handler)
            watchError = nil
        } catch {
            source = nil
            watchError = error
        }
    }

    /// The handler: captures the records, not the pipe (no cycle through the source).
    private static func handler(records: StressPipeRecords, fd: Int32, reading: Reading,
                                loopID: ObjectIdentifier) -> @Sendable (FileDescriptorSource.Events) -> Void {
        { events in
            records.marker.handlerStarted()
            if ObjectIdentifier(PortRunLoop.current) != loopID { records.wrongThread.add(1, ordering: .relaxed) }
            records.state.update { state in
                state.calls += 1
                if !events.contains(.read) { state.errors.append("handler called with events \(events.rawValue), no .read") }
                if state.hold {
                    state.heldCalls += 1
                    return
                }
                var buffer = [UInt8](repeating: 0, count: reading == .lazy ? lazyChunk : 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count > 0 {
                        state.delivered.append(contentsOf: buffer[0..<count])
                        if reading == .lazy { return }
                        continue
                    }
                    if count == 0 {
                        state.errors.append("read returned end of file while the write end is open")
                        return
                    }
                    let error = errno
                    if error == EINTR { continue }
                    if error != EAGAIN && error != EWOULDBLOCK { state.errors.append("read failed, errno \(error)") }
                    return
                }
            }
        }
    }

    /// Writes one record per sequence number (stopping at the first refusal), as `writerIndex`.
    /// Producers are refused once the pipe is sealed; `bypassSeal` is the canceller's. Returns the
    /// number of whole records written.
    @discardableResult
    func write(writerIndex: Int, seqs: Range<Int>, bypassSeal: Bool = false) -> Int {
        writer.withLock { log in
            guard !log.closed, bypassSeal || log.sealedAt == nil else {
                log.refused += 1
                return 0
            }
            var whole = 0
            for seq in seqs {
                let record = StressPipeRecord.bytes(writer: writerIndex, seq: seq)
                let count = record.withUnsafeBytes { raw in
                    kind == .pipe ? Glibc.write(writeFD, raw.baseAddress, raw.count)
                        : send(writeFD, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
                }
                if count > 0 {
                    log.bytes.append(contentsOf: record[0..<count])
                    log.writes += 1
                    if count < record.count {
                        log.partial += 1
                        return whole
                    }
                    whole += 1
                    continue
                }
                let error = errno
                if error == EAGAIN || error == EWOULDBLOCK {
                    log.full += 1
                } else {
                    log.errors.append("write failed, errno \(error)")
                }
                return whole
            }
            return whole
        }
    }

    /// Closes both fds (after every thread that could use them joined). Returns what failed.
    func closeFileDescriptors() -> [String] {
        writer.withLock { log in
            guard !log.closed else { return ["closed twice"] }
            log.closed = true
            var failures: [String] = []
            for (name, fd) in [("read", readFD), ("write", writeFD)] where close(fd) != 0 {
                failures.append("close(\(name) end \(fd)) failed, errno \(errno)")
            }
            return failures
        }
    }

    /// "pipe 7 (socketpair, lazy, common, c3)" for violations.
    var label: String {
        let modeNames = modes.map { $0 == .common ? "common" : $0 == .default ? "default" : $0.rawValue }
        return "pipe \(id) (\(kind.rawValue), \(reading.rawValue), \(modeNames.joined(separator: "+")), c\(consumer.id))"
    }
}
