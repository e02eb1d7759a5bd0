import Foundation
import PortRunLoopKit
import Testing
import PortRunLoopTestSupport

/// Connecting where nothing answers: a refused port, a listener whose backlog is full (the SYN is
/// dropped, as on an unroutable address) with a deadline, a name that does not resolve.
@Suite(.timeLimit(.minutes(1))) struct StreamConnectFailureTests {
    private func connectResult(_ endpoint: SocketEndpoint, timeout: Double) throws -> Result<Bool, StreamConnectionError> {
        let thread = try RunLoopThread(name: "connect-failure")
        defer { thread.stop() }
        let outcome = Locked<Result<Bool, StreamConnectionError>?>(nil)
        let done = Signal()
        StreamConnection.connect(to: endpoint, on: thread.loop, timeout: timeout) { result in
            #expect(thread.loop.isCurrentThread)
            switch result {
            case .success(let connection):
                connection.close()
                outcome.withLock { $0 = .success(true) }
            case .failure(let error):
                outcome.withLock { $0 = .failure(error) }
            }
            done.fire()
        }
        #expect(done.wait())
        return try #require(outcome.withLock { $0 })
    }

    @Test func aClosedPortIsRefused() throws {
        // A port that was just listened on and closed: nothing listens there now.
        let thread = try RunLoopThread(name: "closed-port")
        let listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: thread.loop) { _ in }
        let endpoint = listener.localEndpoint
        listener.close()
        try thread.loop.performAndWait {}
        thread.stop()
        #expect(try connectResult(endpoint, timeout: 5) == .failure(.connectionRefused(endpoint)))
    }

    @Test func aMissingUnixSocketIsRefused() throws {
        let endpoint = SocketEndpoint.unix(path: "/tmp/prl-none-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock")
        #expect(try connectResult(endpoint, timeout: 5) == .failure(.connectionRefused(endpoint)))
    }

    @Test func aConnectNobodyAnswersEndsAtItsDeadline() throws {
        // A listener with backlog 0 that never accepts: once its queue is full the kernel drops
        // further SYNs, and a connect waits as it would for an unroutable address.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        #expect(listen(fd, 0) == 0)
        let endpoint = SocketEndpoint.host("127.0.0.1", port: Int(UInt16(bigEndian: address.sin_port)))
        // Fill the queue (backlog 0 admits one completed connection) with blocking sockets that
        // complete their handshake, then the next connect's SYN is dropped.
        var fillers: [Int32] = []
        defer { for filler in fillers { close(filler) } }
        for _ in 0..<4 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0)
            fillers.append(filler)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, length) } }
        }
        let started = Date()
        let result = try connectResult(endpoint, timeout: 0.5)
        #expect(result == .failure(.timedOut(endpoint)))
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func anUnresolvableNameIsATypedError() throws {
        let result = try connectResult(.host("no-such-host.invalid", port: 80), timeout: 10)
        guard case .failure(.nameResolutionFailed(let host, _)) = result else {
            Issue.record("expected a resolution failure, got \(result)")
            return
        }
        #expect(host == "no-such-host.invalid")
    }

    @Test func badEndpointsAreTypedErrors() throws {
        let tooLong = String(repeating: "x", count: 200)
        guard case .failure(.invalidEndpoint) = try connectResult(.unix(path: "/tmp/" + tooLong), timeout: 1) else {
            Issue.record("a too-long path was accepted"); return
        }
        guard case .failure(.invalidEndpoint) = try connectResult(.host("127.0.0.1", port: -1), timeout: 1) else {
            Issue.record("a negative port was accepted"); return
        }
    }
}
