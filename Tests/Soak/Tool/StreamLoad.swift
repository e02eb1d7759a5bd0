import Foundation
import PortRunLoopKit

/// Stream connections on loopback: a `StreamListener` on one loop thread hands its connections in
/// turn to two server loop threads, which echo every byte; a client loop thread keeps four
/// sessions going, each connecting, writing numbered 64-byte records (4 KiB, every tenth
/// connection 256 KiB, more than the socket takes at once), reading the echo, checking it byte for byte,
/// closing, and connecting again 100 ms later (at rate 1). Every byte written must come back, in order, on a
/// connection that closes cleanly.
///
/// Thread-safety: the ``SoakLoad`` members on the main thread; sessions on the client's thread.
final class StreamLoad: SoakLoad {
    let name = "streams"
    private let ledger: SoakLedger
    private let stopFlag = StopFlag()
    private let sessionCount = 4
    private var acceptor: RunLoopThread?
    private var servers: [RunLoopThread] = []
    private var client: RunLoopThread?
    private var listener: StreamListener?
    private let finished = SoakCounter()
    /// Between a session's connections: 100 ms at rate 1.
    private let pause: Double

    init(ledger: SoakLedger, rate: Double) {
        self.ledger = ledger
        pause = 0.1 / rate
    }

    func start() throws {
        let acceptor = try SoakLoops.thread("soak-stream-accept")
        self.acceptor = acceptor
        servers = try (0..<2).map { try SoakLoops.thread("soak-stream-server-\($0)") }
        let ledger = self.ledger
        let listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: acceptor.loop,
                                          distributingTo: servers.map(\.loop)) { connection in
            connection.onRead = { connection, bytes in
                if !connection.write(bytes) { ledger.violation("streams: the server could not queue an echo") }
            }
            connection.onEvent = { _, event in
                if case .closed(let error?) = event { ledger.violation("streams: a server connection closed with \(error)") }
            }
        }
        self.listener = listener
        let client = try SoakLoops.thread("soak-stream-client")
        self.client = client
        let endpoint = listener.localEndpoint
        let stopFlag = self.stopFlag
        let finished = self.finished
        let pause = self.pause
        for index in 0..<sessionCount {
            _ = client.loop.perform {
                StreamSession(index: index, endpoint: endpoint, loop: client.loop, ledger: ledger,
                              stop: stopFlag, finished: finished, pause: pause).connect()
            }
        }
    }

    func stop() {
        stopFlag.raise()
        if !waitUntil(seconds: 30, { finished.value >= sessionCount }) {
            ledger.violation("streams: \(sessionCount - finished.value) sessions did not finish within 30 s of the stop")
        }
        listener?.close()
    }

    func tearDown() {
        client?.stop()
        for server in servers { server.stop() }
        acceptor?.stop()
    }
}

/// One client session: a connection at a time, on the client loop's thread.
///
/// Thread-safety: not `Sendable`; the client loop's thread only (handed to its timers confined).
final class StreamSession {
    let index: Int
    let endpoint: SocketEndpoint
    let loop: PortRunLoop
    let ledger: SoakLedger
    let stop: StopFlag
    let finished: SoakCounter
    let pause: Double
    /// A record: its number (the connection's in the high half) and a pattern, 64 bytes.
    static let recordSize = 64
    private var connections = 0
    private var written: [UInt8] = []
    private var echoed = 0
    private var mismatched = false

    init(index: Int, endpoint: SocketEndpoint, loop: PortRunLoop, ledger: SoakLedger, stop: StopFlag, finished: SoakCounter,
         pause: Double) {
        self.pause = pause
        self.index = index
        self.endpoint = endpoint
        self.loop = loop
        self.ledger = ledger
        self.stop = stop
        self.finished = finished
    }

    func connect() {
        guard !stop.isRaised else { return finished.add() }
        connections += 1
        let records = connections % 10 == 0 ? 4_096 : 64 // 256 KiB: more than the socket takes at once; else 4 KiB
        let confined = Confined(self)
        StreamConnection.connect(to: endpoint, on: loop, timeout: 10) { result in
            confined.value.connected(result, records: records)
        }
    }

    private func connected(_ result: Result<StreamConnection, StreamConnectionError>, records: Int) {
        guard case .success(let connection) = result else {
            ledger.violation("streams: session \(index) could not connect: \(result)")
            return again()
        }
        ledger.restarted("connections")
        written = []
        written.reserveCapacity(records * Self.recordSize)
        for record in 0..<records {
            withUnsafeBytes(of: (UInt64(connections) << 32 | UInt64(record)).littleEndian) { written.append(contentsOf: $0) }
            written.append(contentsOf: repeatElement(UInt8(truncatingIfNeeded: record), count: Self.recordSize - 8))
        }
        echoed = 0
        mismatched = false
        let total = written.count
        connection.onRead = { [self] connection, bytes in
            guard echoed + bytes.count <= total else {
                ledger.violation("streams: session \(index) got back more than it wrote")
                return connection.close()
            }
            if !mismatched && !bytes.elementsEqual(written[echoed..<(echoed + bytes.count)]) {
                mismatched = true
                ledger.violation("streams: session \(index) got back bytes it did not write at offset \(echoed)")
            }
            echoed += bytes.count
            if echoed == total { connection.close() }
        }
        connection.onEvent = { [self] _, event in
            guard case .closed(let error) = event else { return }
            let records = total / Self.recordSize
            ledger.sent(records)
            if echoed == total && error == nil {
                ledger.delivered(records)
            } else {
                ledger.delivered(echoed / Self.recordSize)
                ledger.lost(records - echoed / Self.recordSize, "streams: session \(index)'s connection ended with \(echoed) of \(total) bytes echoed (\(error.map { "\($0)" } ?? "no error"))")
            }
            again()
        }
        if !connection.write(written) { ledger.violation("streams: session \(index) could not queue its records") }
    }

    /// Connects again after the pause (or finishes if the soak is stopping).
    private func again() {
        let confined = Confined(self)
        loop.add(RunLoopTimer(after: pause) { _ in confined.value.connect() }, forMode: .common)
    }
}

/// A value handed through a `@Sendable` closure that runs on the one thread the value is
/// confined to (a loop's).
///
/// Thread-safety: `@unchecked Sendable` by that confinement.
struct Confined<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
