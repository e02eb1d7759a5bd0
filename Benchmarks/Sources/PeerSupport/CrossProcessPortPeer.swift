import Foundation
import Synchronization
import PortRunLoopKit

/// PortRunLoop's cross-process ports as a transport of the cross-process scenarios: the server
/// publishes a ``MessagePort`` under a name on a ``RunLoopThread``, the client looks it up.
/// Echo is ``MessagePort/sendRequest(msgid:components:sendTimeout:receiveTimeout:)`` answered by
/// ``MessagePort/Message/reply(msgid:components:before:)``; sink is a plain send with no
/// components; flush is a request, answered once every earlier message of the connection was handled
/// (FIFO per sender).
public enum CrossProcessPortPeer {
    /// The published port's queue limit, and so each connection's credits: about the raw floor's
    /// window (278 16-byte frames fill a `SOCK_SEQPACKET` socket's default send buffer before
    /// `send` blocks), so that both transports let the same number of messages be in flight.
    ///
    /// Thread-safety: a constant.
    public static let queueLimit = 256

    static let echo: UInt32 = 0x45, sink: UInt32 = 0x53, flush: UInt32 = 0x46

    /// Publishes the server port under `name` and returns it (kept alive by the caller).
    ///
    /// Thread-safety: any thread.
    public static func serve(name: String) throws -> (RunLoopThread, PublishedMessagePort) {
        let thread = try RunLoopThread(name: "bench-port-server")
        let port = MessagePort(queueLimit: queueLimit)
        port.setHandler { message in
            switch message.msgid {
            case echo: message.reply(msgid: echo, components: message.components, before: .distantFuture)
            case flush: message.reply(msgid: flush, before: .distantFuture)
            default: break
            }
        }
        thread.loop.add(port, forMode: .common)
        return (thread, try MessagePortNameRegistry.default.publish(port, as: name, on: thread.loop))
    }
}

/// The client half: a remote port.
///
/// Thread-safety: one driving thread (see ``CrossProcessClient``).
public final class CrossProcessPortClient: CrossProcessClient, @unchecked Sendable {
    /// The remote port (also the async client's).
    let remote: MessagePort

    /// Looks `name` up.
    ///
    /// Thread-safety: any thread.
    public init(name: String) throws {
        remote = try MessagePortNameRegistry.default.remotePort(named: name)
    }

    /// Thread-safety: the driving thread.
    public func roundTrips(_ count: Int, size: Int, latencies: UnsafeMutablePointer<Int64>?) throws {
        let payload = [Data(repeating: 0x78, count: size)]
        for i in 0..<count {
            let start = ProcessCounters.nanoseconds()
            _ = try remote.sendRequest(msgid: CrossProcessPortPeer.echo, components: payload,
                                       sendTimeout: .seconds(5), receiveTimeout: .seconds(5))
            latencies?[i] = Int64(ProcessCounters.nanoseconds() - start)
        }
    }

    /// Thread-safety: the driving thread.
    public func burst(_ count: Int, size: Int) throws {
        for _ in 0..<count {
            guard remote.send(before: .distantFuture, msgid: CrossProcessPortPeer.sink) else {
                throw CrossProcessFailure("MessagePort send to the published port failed")
            }
        }
        _ = try remote.sendRequest(msgid: CrossProcessPortPeer.flush, sendTimeout: .seconds(5), receiveTimeout: .seconds(30))
    }

    /// Thread-safety: the driving thread, once.
    public func close() { remote.invalidate() }
}

/// The client half with the `async` form of `sendRequest`: the round trips run in a task (no
/// thread blocked while a reply is on its way) that the driving thread waits for once per sample;
/// bursts and the rest are ``CrossProcessPortClient``'s, on the same remote port.
///
/// Thread-safety: one driving thread (see ``CrossProcessClient``).
public final class CrossProcessPortAsyncClient: CrossProcessClient, @unchecked Sendable {
    private let blocking: CrossProcessPortClient

    /// Looks `name` up.
    ///
    /// Thread-safety: any thread.
    public init(name: String) throws {
        blocking = try CrossProcessPortClient(name: name)
    }

    /// Thread-safety: the driving thread.
    public func roundTrips(_ count: Int, size: Int, latencies: UnsafeMutablePointer<Int64>?) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        nonisolated(unsafe) let latencies = latencies // written by the task only, read after `done`
        let remote = blocking.remote
        Task.detached {
            let payload = [Data(repeating: 0x78, count: size)]
            do throws(CrossProcessPortError) {
                for i in 0..<count {
                    let start = ProcessCounters.nanoseconds()
                    _ = try await remote.sendRequest(msgid: CrossProcessPortPeer.echo, components: payload,
                                                     sendTimeout: .seconds(5), receiveTimeout: .seconds(5))
                    latencies?[i] = Int64(ProcessCounters.nanoseconds() - start)
                }
            } catch {
                outcome.error.withLock { $0 = error }
            }
            done.signal()
        }
        done.wait()
        if let error = outcome.error.withLock({ $0 }) { throw error }
    }

    /// Thread-safety: the driving thread.
    public func burst(_ count: Int, size: Int) throws { try blocking.burst(count, size: size) }

    /// Thread-safety: the driving thread, once.
    public func close() { blocking.close() }

    /// The task's error, handed to the driving thread.
    private final class Outcome: Sendable {
        let error = Mutex<CrossProcessPortError?>(nil)
    }
}

extension CrossProcessTransport {
    /// PortRunLoop's cross-process ports: a published `MessagePort` and a remote port.
    ///
    /// Thread-safety: a constant.
    public static let ours = CrossProcessTransport(name: "Ours", peerArgument: "ours") { try CrossProcessPortClient(name: $0) }
    /// The same, with the `async` form of `sendRequest` for round trips.
    ///
    /// Thread-safety: a constant.
    public static let oursAsync = CrossProcessTransport(name: "OursAsync", peerArgument: "ours") {
        try CrossProcessPortAsyncClient(name: $0)
    }
}
