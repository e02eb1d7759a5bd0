#if canImport(Glibc)
import Glibc
#endif
import PeerSupport
import PortRunLoopKit

/// Ours on the library's stream sockets: a ``StreamListener`` on 127.0.0.1 whose connections echo
/// with `connection.onRead = { $0.write($1) }`, on one ``RunLoopThread`` (`loops` 1), or accepting
/// on the first of `loops` threads and handing the connections to all of them in turn
/// (`distributingTo:`). The same work as ``PortRunLoopEchoServer``'s hand-written fd sources, with
/// the library's read buffer, outbound queue and events.
///
/// Thread-safety: `Sendable`; ``shutDown()`` from the driving thread; the connections live on
/// their loops' threads.
public final class StreamEchoServer: EchoServer, @unchecked Sendable {
    /// The listening port on 127.0.0.1.
    ///
    /// Thread-safety: immutable.
    public let port: Int
    /// The loop threads' CPU-time clocks.
    ///
    /// Thread-safety: immutable.
    public let serverThreadClocks: [clockid_t]
    private let threads: [RunLoopThread]
    private let listener: StreamListener

    /// Starts `loops` loop threads and listens on an ephemeral port of 127.0.0.1 (backlog 4096, as
    /// the other peers).
    ///
    /// Thread-safety: any thread.
    public init(loops: Int = 1) throws {
        precondition(loops >= 1, "StreamEchoServer: needs a loop")
        var threads: [RunLoopThread] = []
        do {
            for index in 0..<loops { threads.append(try RunLoopThread(name: "bench.streams.\(index)")) }
            serverThreadClocks = try threads.map { thread in
                try thread.loop.performAndWait { ProcessCounters.currentThreadCPUClock() }
            }
            var options = StreamListener.Options()
            options.backlog = 4096
            listener = try StreamListener(on: .host("127.0.0.1", port: 0), loop: threads[0].loop, options: options,
                                          distributingTo: loops > 1 ? threads.map(\.loop) : []) { connection in
                connection.onRead = { $0.write($1) }
            }
        } catch {
            for thread in threads { thread.stop() }
            throw error
        }
        self.threads = threads
        port = listener.localEndpoint.port ?? 0
    }

    /// Connections the listener accepted.
    ///
    /// Thread-safety: any thread.
    public var acceptedConnections: Int? { listener.statistics.accepted }

    /// Closes the listener and ends the loop threads, which closes the connections still open
    /// (see ``EchoServer/shutDown()``).
    ///
    /// Thread-safety: the driving thread, once, after the clients closed.
    public func shutDown() {
        listener.close()
        for thread in threads { thread.stop() }
    }
}
