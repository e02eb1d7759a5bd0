import Benchmark
import BenchSupport
import Dispatch
import Foundation
import NIOPeer
import PortRunLoopKit

/// The full comparison: every scenario for ours and for every peer, in one run.
/// Docs/Benchmarks.md explains the scenarios and how to read the output.
let benchmarks: @Sendable () -> Void = {
    // Peers, floor first. Names are [A-Za-z0-9._-] only.
    let peers: [(name: String, slow: Bool, factory: ChannelFactory)] = [
        ("RawEventfd", false, { RawEventfdChannel(receiver: $0) }),
        ("RawLibEvent", false, { RawLibEventChannel(receiver: $0) }),
        ("Dispatch.async", false, { DispatchChannel(receiver: $0) }),
        ("NIO.execute", false, { NIOExecuteChannel(receiver: $0) }),
        ("RunLoop.perform", true, { FoundationRunLoopChannel(receiver: $0) }),
        ("Ours.perform", false, { try PortRunLoopPerformChannel(receiver: $0) }),
        ("Ours.MessagePort.send", false, { try MessagePortChannel(receiver: $0) }),
    ]

    // Throughput: 1 producer x 1M, 2 producers x 500k.
    for peer in peers {
        // Foundation's RunLoop takes ~5-10 µs per message: 100k per sample (see Scenarios.throughput).
        let messages = peer.slow ? Scenarios.burst / 10 : Scenarios.burst
        let maxDuration: Duration = peer.slow ? .seconds(8) : .seconds(3)
        Scenarios.throughput(peer.name, producers: 1, messages: messages, maxDuration: maxDuration, factory: peer.factory)
        Scenarios.throughput(peer.name, producers: 2, messages: messages, maxDuration: maxDuration, factory: peer.factory)
    }
    // The same two hand-offs with ServiceContext capturing on (as with a tracer bootstrapped):
    // what reading the caller's context per message costs (Docs/Benchmarks.md, "Caller context").
    for producers in [1, 2] {
        Scenarios.throughput("Ours.perform.contextCapture", producers: producers) { receiver in
            try WithContextCapture { try PortRunLoopPerformChannel(receiver: receiver) }
        }
        Scenarios.throughput("Ours.MessagePort.send.contextCapture", producers: producers) { receiver in
            try WithContextCapture { try MessagePortChannel(receiver: receiver) }
        }
    }
    // Round trip between two threads of the same peer, 1000 per sample.
    for peer in peers {
        Scenarios.roundTrip(peer.name, factory: peer.factory)
    }
    // A custom source signalled and the loop woken from another thread, beside `perform` (the
    // row above); and a turn with 10 observers of every activity, beside none (`perform`).
    Scenarios.roundTrip("Ours.RunLoopSource.signal") { try PortRunLoopSourceChannel(receiver: $0) }
    Scenarios.roundTrip("Ours.perform.10observers") { try ObservedPerformChannel(receiver: $0, observers: 10) }
    // First send after the consumer idled.
    for peer in peers {
        Scenarios.firstSendAfterIdle(peer.name, factory: peer.factory)
    }
    // The same, every peer but Foundation's run loop in turn within each sample (the targets' measure).
    Scenarios.firstSendAfterIdleInterleaved(peers: peers.filter { !$0.slow }.map { ($0.name, $0.factory) })

    // A notification redirected to another thread vs NIO execute carrying the same notification.
    Scenarios.throughput("Redirect.Ours.ThreadNotificationCenter.post", producers: 1) {
        try RedirectedNotificationChannel(receiver: $0)
    }
    Scenarios.throughput("Redirect.NIO.execute", producers: 1) { NIOExecuteNotificationChannel(receiver: $0) }
    Scenarios.roundTrip("Redirect.Ours.ThreadNotificationCenter.post") { try RedirectedNotificationChannel(receiver: $0) }
    Scenarios.roundTrip("Redirect.NIO.execute") { NIOExecuteNotificationChannel(receiver: $0) }

    // A post whose observer is on the posting thread (delivered inline) vs Foundation's center.
    do {
        let ours = ThreadNotificationCenter()
        let counter = Counter()
        let note = Notification(name: .benchmarkRedirect)
        let observation = ours.addObserver(forName: .benchmarkRedirect, object: nil) { _ in counter.bump() }
        Scenarios.inline("SameThreadPost.Ours.ThreadNotificationCenter.post") {
            withExtendedLifetime(observation) { ours.post(note) }
        }
        let foundation = NotificationCenter()
        let token = foundation.addObserver(forName: .benchmarkRedirect, object: nil, queue: nil) { _ in counter.bump() }
        Scenarios.inline("SameThreadPost.Foundation.NotificationCenter.post") {
            withExtendedLifetime(token) { foundation.post(note) }
        }
    }

    // Blocking calls from a plain thread.
    Scenarios.syncRoundTrip("Ours.performAndWait") {
        let thread = try RunLoopThread(name: "bench.sync")
        return SyncRoundTripFixture(calls: Scenarios.roundTrips, call: { try? thread.loop.performAndWait {} },
                                    tearDown: { thread.stop() })
    }
    Scenarios.syncRoundTrip("NIO.submit.wait") { NIOSyncCall.fixture(calls: Scenarios.roundTrips) }
    Scenarios.syncRoundTrip("Dispatch.sync") {
        let queue = DispatchQueue(label: "bench.sync")
        return SyncRoundTripFixture(calls: Scenarios.roundTrips, call: { queue.sync {} }, tearDown: {})
    }

    // An actor hop: our executor vs NIO's vs the default executor.
    Scenarios.actorHop("Ours.PortRunLoop", make: { try LoopPinnedActor() },
                       tearDown: { ($0 as? LoopPinnedActor)?.thread.stop() })
    Scenarios.actorHop("NIO.EventLoop", make: { NIOPinnedActor() },
                       tearDown: { try? ($0 as? NIOPinnedActor)?.group.syncShutdownGracefully() })
    Scenarios.actorHop("Default", make: { DefaultExecutorActor() })

    // One loop thread serving fds and timers (ServerScenarios.swift).
    registerServerScenarios()
    registerCrossProcessScenarios()
    registerBusNotificationScenarios()
}

/// A counter the same-thread observers bump (so the handlers are not empty).
final class Counter: @unchecked Sendable {
    private var value = 0
    func bump() { value &+= 1 }
}
