// swift-tools-version: 6.1
//
// PortRunLoop's benchmarks, side by side with the peers. A package of its own beside the
// library, so that users of PortRunLoopKit never fetch ordo-one/benchmark or SwiftNIO.
//
//   cd Benchmarks && swift package benchmark                 # everything (see Docs/Benchmarks.md)
//   Scripts/run-benchmarks.sh                                # unpinned + pinned runs, table, chart
//   Scripts/check-benchmark-thresholds.sh                    # the CI guard (mallocs, wake signals)
//
// Targets:
// - PortRunLoopBenchmarks: the full comparison (ours, raw eventfd, epoll and libevent floors,
//   Dispatch, NIO, Foundation RunLoop), and the server-shaped scenarios (fd ping-pong, idle
//   sources and timers, timer churn, sparse traffic, a TCP echo server, TLS handshakes and bulk
//   echo against a C server on OpenSSL). Builds SwiftNIO.
// - PortRunLoopGuards: only what CI guards (allocation and wake-signal counts of our hot paths),
//   with few samples, so the CI check runs in about a minute once built.
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name, which is whatever the library's checkout is
// called (`main` here, something else in CI's clone), not its package name: compute it.
let library = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "PortRunLoopBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
    ],
    targets: [
        // eventfd(2) and the two CoreFoundation run-loop calls Foundation on Linux does not expose
        // (declared by hand, without system headers: see the header).
        .target(name: "CBenchSupport", path: "Sources/CBenchSupport"),
        // libevent for the raw libevent floor. The library's own CLibEvent is not a product, so the
        // benchmarks have their own module map over the same headers.
        .systemLibrary(
            name: "CBenchLibEvent",
            path: "Sources/CBenchLibEvent",
            pkgConfig: "libevent_pthreads",
            providers: [.apt(["libevent-dev"])]
        ),
        // C that needs system headers or libevent: the epoll and libevent floors of the
        // server-shaped scenarios, socket set-up, and the echo server's load generator. Its headers
        // include no system header (same rule as CBenchSupport's).
        .target(name: "CBenchNative", dependencies: ["CBenchLibEvent", "CBenchDBus", "CBenchHiredis"], path: "Sources/CBenchNative",
                linkerSettings: [.linkedLibrary("hiredis")]),
        // The C floor of the TLS echo scenarios, and their client: OpenSSL's libssl and libcrypto,
        // whose headers are in the default include path (libssl-dev). The library's COpenSSL is not
        // a product. Its headers include no system header (same rule as CBenchNative's).
        .target(name: "CBenchTLS", path: "Sources/CBenchTLS",
                linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        // libdbus-1 for the D-Bus floor of the cross-process scenarios (cbench_dbus.c).
        .systemLibrary(
            name: "CBenchDBus",
            path: "Sources/CBenchDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // hiredis for the Redis floor of the bus-notification scenarios (cbench_bus_redis.c). No
        // pkgConfig: hiredis.pc's -D_FILE_OFFSET_BITS=64 is a SwiftPM warning on every build; the
        // headers are in the default include path and the module map links the library.
        .systemLibrary(name: "CBenchHiredis", path: "Sources/CBenchHiredis"),
        // What the second process of the cross-process and bus scenarios runs (each transport's
        // client and server, the bus-notification sides), without package-benchmark: linking it
        // would bring the malloc interposer, which replaces `malloc` and `free` for the whole
        // process. The benchmark process counts allocations; the peer process counts none, so the
        // interposer would only add its cost to every allocation of every peer's server there.
        .target(
            name: "PeerSupport",
            dependencies: [
                "CBenchNative",
                .product(name: "PortRunLoopKit", package: library),
                .product(name: "PortRunLoopDBus", package: library),
                .product(name: "PortRunLoopRedis", package: library),
            ],
            path: "Sources/PeerSupport"
        ),
        // The harness and the in-process peers except NIO (shared by both benchmark targets).
        .target(
            name: "BenchSupport",
            dependencies: [
                "CBenchSupport",
                "CBenchNative",
                "CBenchLibEvent",
                "CBenchTLS",
                "PeerSupport",
                .product(name: "PortRunLoopKit", package: library),
                .product(name: "PortRunLoopDBus", package: library),
                .product(name: "PortRunLoopRedis", package: library),
                .product(name: "PortRunLoopTLS", package: library),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Sources/BenchSupport"
        ),
        // The SwiftNIO transport of the cross-process scenarios (client and server over a Unix
        // socket), for both processes: without package-benchmark, like PeerSupport.
        .target(
            name: "NIOSocketPeer",
            dependencies: [
                "PeerSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/NIOSocketPeer"
        ),
        // The SwiftNIO peer (EventLoop.execute, and NIO's executor for the actor hop).
        .target(
            name: "NIOPeer",
            dependencies: [
                "BenchSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/NIOPeer"
        ),
        .executableTarget(
            name: "PortRunLoopBenchmarks",
            dependencies: [
                "BenchSupport",
                "NIOPeer",
                "NIOSocketPeer",
                "PeerSupport",
                .product(name: "PortRunLoopKit", package: library),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/PortRunLoopBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The second process of the cross-process scenarios: serves one transport, or sends bursts
        // on command (see its main.swift). Built beside the benchmarks by Scripts/run-benchmarks.sh.
        .executableTarget(
            name: "CrossProcessBenchPeer",
            dependencies: ["PeerSupport", "NIOSocketPeer", "CBenchNative"],
            path: "Sources/CrossProcessBenchPeer"
        ),
        .executableTarget(
            name: "PortRunLoopGuards",
            dependencies: [
                "BenchSupport",
                .product(name: "PortRunLoopKit", package: library),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/PortRunLoopGuards",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
