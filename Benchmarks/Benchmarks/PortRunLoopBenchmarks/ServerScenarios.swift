import BenchSupport
import NIOPeer
import PortRunLoopKit

/// The server-shaped scenarios (Docs/Benchmarks.md, "The scenarios"): one loop thread
/// serving file descriptors and timers, every peer side by side in one run.
///
/// Thread-safety: call from the benchmark registration closure only.
func registerServerScenarios() {
    typealias Drive = PortRunLoopFdPingPong.Drive
    let ours: [(name: String, drive: Drive)] = [("Ours.run", .run), ("Ours.runModeBefore", .runModeBefore)]

    // FdPingPong.<peer>: one thread, a socketpair ping-pong.
    for peer in ours {
        Scenarios.fdPingPong(peer.name) { try PortRunLoopFdPingPong(drive: peer.drive, idle: $0) }
    }
    Scenarios.fdPingPong("LibEvent") { LibEventFdPingPong(idle: $0) }
    Scenarios.fdPingPong("Epoll") { _ in EpollFdPingPong() }
    Scenarios.fdPingPong("NIO") { _ in try NIOFdPingPong() }

    // FdPingPong.Idle<N>.<peer> and Timers.Idle<N>.<peer>: the same with idle fd sources or far-future
    // timers registered beside it. Every sample is capped at Scenarios.sampleCap and the benchmark at
    // about 15 s, so a peer whose turn cost grows with the idle load still finishes.
    for count in [0, 1000, 10_000, 100_000] {
        for idle in [IdleLoad.fileDescriptors(count), IdleLoad.timers(count)] {
            for peer in ours {
                Scenarios.fdPingPong(peer.name, idle: idle, maxDuration: .seconds(10), maxIterations: 10) {
                    try PortRunLoopFdPingPong(drive: peer.drive, idle: $0)
                }
            }
            Scenarios.fdPingPong("LibEvent", idle: idle, maxDuration: .seconds(10), maxIterations: 10) {
                LibEventFdPingPong(idle: $0)
            }
        }
    }

    // TimerChurn.<peer>: a connection timeout per request.
    Scenarios.timerChurn("Ours") { try PortRunLoopTimerChurn() }
    Scenarios.timerChurn("LibEvent") { LibEventTimerChurn() }
    Scenarios.timerChurn("NIO") { NIOTimerChurn() }

    // TimerLateness.<peer>: how late a timer 300 µs ahead runs on an idle loop.
    Scenarios.timerLateness("Ours") { try PortRunLoopTimerLateness() }
    Scenarios.timerLateness("LibEvent") { LibEventTimerLateness() }
    Scenarios.timerLateness("NIO") { NIOTimerLateness() }

    // RunEntry.Ours.Idle10k: the Foundation idiom's fixed cost per run entry (and its libevent calls:
    // none), with 10k fd sources and 1k timers registered.
    Scenarios.runEntry("Ours.Idle10k", idle: 10_000, timers: 1_000)

    // ObserverRounds.Ours.perform{,.10observers}: rounds of observer calls per Foundation-idiom turn
    // (a perform from another thread, one run(mode:before:)): none without observers, four with.
    Scenarios.observerRounds("Ours.perform", observers: 0)
    Scenarios.observerRounds("Ours.perform.10observers", observers: 10)

    // SparseCPU.<peer>.<gap>: CPU per message when messages come one at a time. `Inline` is the
    // producer's own cost (pacing, no hand-off), to subtract from the others.
    let sparsePeers: [(name: String, factory: ChannelFactory)] = [
        ("Inline", { InlineChannel(receiver: $0) }),
        ("Ours", { try PortRunLoopPerformChannel(receiver: $0) }),
        ("NIO", { NIOExecuteChannel(receiver: $0) }),
        ("Dispatch", { DispatchChannel(receiver: $0) }),
    ]
    for peer in sparsePeers {
        for gap in Scenarios.SparseGap.all {
            Scenarios.sparseCPU(peer.name, gap: gap, factory: peer.factory)
        }
    }
    // The same peers in turn within each sample (the targets' measure).
    for gap in Scenarios.SparseGap.all {
        Scenarios.sparseCPUInterleaved(gap: gap, peers: sparsePeers)
    }

    // EchoServer.<peer>: a TCP echo server with one loop thread, 1000 client connections;
    // EchoServer.Conn100.<peer>: the same with 100; EchoServer.Conn100.At60k.<peer>: 100 at an
    // offered load of 60,000 requests/s, below every peer's saturation on the benchmark host (the
    // servers' latencies at the same load). `Ours` on hand-written fd sources, `Streams` on
    // StreamListener and StreamConnection, `Bufferevent` on libevent's evconnlistener and
    // bufferevents (the buffered layer libevent ships, in C).
    let echoLoads: [(prefix: String, connections: Int, rate: Int?)] =
        [("", Scenarios.echoConnections, nil), ("Conn100.", 100, nil), ("Conn100.At60k.", 100, Scenarios.echoPacedRate)]
    for (prefix, connections, rate) in echoLoads {
        Scenarios.echoServer("\(prefix)Ours", connections: connections, rate: rate) { try PortRunLoopEchoServer() }
        Scenarios.echoServer("\(prefix)Streams", connections: connections, rate: rate) { try StreamEchoServer() }
        Scenarios.echoServer("\(prefix)Bufferevent", connections: connections, rate: rate) { try BuffereventEchoServer() }
        Scenarios.echoServer("\(prefix)NIO", connections: connections, rate: rate) { try NIOEchoServer() }
    }
    // EchoServer.TwoLoops.<peer>: the server on two loop threads, 1000 connections.
    Scenarios.echoServer("TwoLoops.Streams") { try StreamEchoServer(loops: 2) }
    Scenarios.echoServer("TwoLoops.NIO") { try NIOEchoServer(threads: 2) }
    // EchoServer.Idle10k.Streams: EchoServer.Conn100.Streams beside 10,000 idle connections.
    Scenarios.echoServer("Idle10k.Streams", connections: 100, idleConnections: 10_000) { try StreamEchoServer() }

    // TLSEcho.Handshakes.<peer>, TLSEcho.Bulk.<peer>: a TLS echo server on one thread, ours
    // (StreamListener(tlsOn:)) beside a C server written directly on OpenSSL, with the same C client.
    let tlsServers: [(name: String, make: Scenarios.TLSServerFactory)] = [
        ("Ours", { try TLSEchoServer(certificate: $0) }),
        ("COpenSSL", { try OpenSSLEchoServer(certificate: $0) }),
    ]
    for server in tlsServers { Scenarios.tlsHandshakes(server.name, make: server.make) }
    for server in tlsServers { Scenarios.tlsBulk(server.name, make: server.make) }

    // StreamEcho.Ours.<shape>: a stream connection's steady-state reads and writes (the guard's
    // allocation count).
    Scenarios.streamEcho(.direct)
    Scenarios.streamEcho(.queued)
}
