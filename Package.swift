// swift-tools-version:6.0
import PackageDescription

/// What every fuzz target links: its family's harness and the driver.
let fuzzTargetDependencies: [Target.Dependency] = ["PortRunLoopFuzzHarness", "PortRunLoopFuzzSupport"]

let package = Package(
    name: "PortRunLoop",
    products: [
        .library(name: "PortRunLoopKit", targets: ["PortRunLoopKit"]),
        // RunLoopThread as a swift-service-lifecycle Service, and PortRunLoop.main as the main loop
        // of a ServiceGroup program (the core does not depend on swift-service-lifecycle).
        .library(name: "PortRunLoopServiceLifecycle", targets: ["PortRunLoopServiceLifecycle"]),
        // Loop and notification-queue counters as swift-metrics counters, gauges and timers
        // (the core does not depend on swift-metrics).
        .library(name: "PortRunLoopMetrics", targets: ["PortRunLoopMetrics"]),
        // Distributed notifications independent of their transport: BusNotificationCenter, its
        // observations, suspension and userInfo fields, and the protocol a transport implements
        // (neither the core nor this module depends on libdbus or hiredis).
        .library(name: "PortRunLoopBus", targets: ["PortRunLoopBus"]),
        // Distributed notifications between processes over D-Bus, delivered on a chosen loop
        // (re-exports PortRunLoopBus; only this product links libdbus).
        .library(name: "PortRunLoopDBus", targets: ["PortRunLoopDBus"]),
        // The same distributed notifications over Redis pub/sub (many hosts), through hiredis' async
        // API on the loop's fd sources (re-exports PortRunLoopBus; only this product links hiredis,
        // and it does not link libdbus).
        .library(name: "PortRunLoopRedis", targets: ["PortRunLoopRedis"]),
        // TLS for stream connections and listeners, OpenSSL driven on the connection's own socket
        // (only this product links OpenSSL; the core does not).
        .library(name: "PortRunLoopTLS", targets: ["PortRunLoopTLS"]),
        .executable(name: "portrunloop-demo", targets: ["PortRunLoopDemo"]),
        .executable(name: "portrunloop-stress", targets: ["PortRunLoopStress"]),
        .executable(name: "portrunloop-soak", targets: ["PortRunLoopSoak"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-service-context", from: "1.5.1"),
        // `swift package generate-documentation` (Scripts/build-docs.sh); no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibEvent",
            path: "CLibEvent",
            pkgConfig: "libevent_pthreads",
            providers: [.apt(["libevent-dev"])]
        ),
        // epoll(7) and eventfd(2) for Support/System.swift (the Glibc module exports neither).
        .systemLibrary(name: "CLinux", path: "CLinux"),
        .target(
            name: "PortRunLoopKit",
            dependencies: [
                "CLibEvent",
                "CLinux",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceContextModule", package: "swift-service-context"),
            ]
        ),
        .executableTarget(
            name: "PortRunLoopDemo",
            dependencies: ["PortRunLoopKit", "PortRunLoopDBus"]
        ),
        // Reliability: the stress/load/model engine, shared by the stress tool and the tests. The
        // engine, the tool and the probe programs below live under Tests/: Sources/ holds only what
        // users import or run (the libraries and the demo).
        .target(
            name: "PortRunLoopStressEngine",
            dependencies: ["PortRunLoopKit"],
            path: "Tests/PortRunLoopStress/Engine"
        ),
        .executableTarget(
            name: "PortRunLoopStress",
            dependencies: ["PortRunLoopStressEngine", "PortRunLoopKit"],
            path: "Tests/PortRunLoopStress/Tool"
        ),
        // A program whose main thread runs PortRunLoop.main (MainQueueDrainTests runs it).
        .executableTarget(
            name: "MainQueueProbe",
            dependencies: ["PortRunLoopKit"],
            path: "Tests/Probes/MainQueueProbe"
        ),
        // The other process of the cross-process port tests (CrossProcess*Tests run it).
        .executableTarget(
            name: "CrossProcessProbe",
            dependencies: ["PortRunLoopKit"],
            path: "Tests/Probes/CrossProcessProbe"
        ),
        // A stream server that runs itself out of descriptors (StreamListenerExhaustionTests runs it).
        .executableTarget(
            name: "StreamServerProbe",
            dependencies: ["PortRunLoopKit"],
            path: "Tests/Probes/StreamServerProbe"
        ),
        // Per-thread seccomp filters the tests use to make the kernel refuse one system call.
        .systemLibrary(name: "CSyscallRefusal", path: "Tests/CSyscallRefusal"),
        // Child processes whose output a caller waits on, and the private daemons (dbus-daemon,
        // redis-server) the D-Bus and Redis tests and the soak tool start: no Testing, so the soak
        // tool links it too.
        // posix_spawn's close-from action and prctl's parent-death signal, for the children above.
        .systemLibrary(name: "CChildProcess", path: "Tests/CChildProcess"),
        .target(
            name: "PortRunLoopDaemons",
            dependencies: ["CChildProcess", "PortRunLoopDBus", "PortRunLoopRedis"],
            path: "Tests/PortRunLoopDaemons"
        ),
        // What every test target shares: locks and waits ThreadSanitizer sees, log recording, child
        // processes whose output a test waits on, system calls refused on one thread.
        .target(
            name: "PortRunLoopTestSupport",
            dependencies: ["CSyscallRefusal", "PortRunLoopDaemons", "PortRunLoopStressEngine",
                           .product(name: "Logging", package: "swift-log")],
            path: "Tests/PortRunLoopTestSupport"
        ),
        .testTarget(
            name: "PortRunLoopKitTests",
            dependencies: [
                "PortRunLoopTestSupport",
                "PortRunLoopKit",
                "PortRunLoopStressEngine",
                .product(name: "ServiceContextModule", package: "swift-service-context"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "PortRunLoopServiceLifecycle",
            dependencies: [
                "PortRunLoopKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A program whose main thread runs PortRunLoop.main under a ServiceGroup
        // (MainRunLoopTests runs it and sends it SIGTERM).
        .executableTarget(
            name: "ServiceLifecycleProbe",
            dependencies: [
                "PortRunLoopServiceLifecycle",
                "PortRunLoopKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Probes/ServiceLifecycleProbe"
        ),
        .testTarget(
            name: "PortRunLoopServiceLifecycleTests",
            dependencies: [
                "PortRunLoopTestSupport",
                "PortRunLoopServiceLifecycle",
                "PortRunLoopKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "PortRunLoopMetrics",
            dependencies: [
                "PortRunLoopKit",
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "PortRunLoopMetricsTests",
            dependencies: [
                "PortRunLoopTestSupport",
                "PortRunLoopMetrics",
                "PortRunLoopKit",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .systemLibrary(
            name: "CDBus",
            path: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .target(
            name: "PortRunLoopBus",
            dependencies: [
                "PortRunLoopKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "PortRunLoopBusTests",
            dependencies: ["PortRunLoopBus"]
        ),
        .target(
            name: "PortRunLoopDBus",
            dependencies: [
                "CDBus",
                "PortRunLoopBus",
                "PortRunLoopKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A program that posts or observes distributed notifications per its arguments
        // (BusNotificationTwoProcessTests runs two of them against a private dbus-daemon).
        .executableTarget(
            name: "BusNotificationProbe",
            dependencies: ["PortRunLoopDBus", "PortRunLoopKit"],
            path: "Tests/Probes/BusNotificationProbe"
        ),
        .testTarget(
            name: "PortRunLoopDBusTests",
            dependencies: [
                "PortRunLoopTestSupport",
                "PortRunLoopDBus",
                "PortRunLoopKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .systemLibrary(
            name: "CHiredis",
            path: "CHiredis"
            // No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a
            // warning on every build; the headers are in the default include path and the module
            // map links the library. Scripts/install-deps.sh installs libhiredis-dev.
        ),
        .target(
            name: "PortRunLoopRedis",
            dependencies: [
                "CHiredis",
                "PortRunLoopBus",
                "PortRunLoopKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A program that posts or echoes distributed notifications over Redis per its arguments
        // (RedisTwoProcessTests runs it against a private redis-server; RedisLinkageTests checks
        // that it does not link libdbus).
        .executableTarget(
            name: "RedisNotificationProbe",
            dependencies: ["PortRunLoopRedis", "PortRunLoopKit"],
            path: "Tests/Probes/RedisNotificationProbe"
        ),
        .testTarget(
            name: "PortRunLoopRedisTests",
            dependencies: [
                "PortRunLoopTestSupport",
                "PortRunLoopRedis",
                "PortRunLoopDBus",
                "PortRunLoopKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
 // The soak: every feature at once for a chosen time, with private D-Bus and Redis daemons
        // and a peer process (Scripts/soak.sh, SoakToolTests). Its children die with it.
        .executableTarget(
            name: "PortRunLoopSoak",
            dependencies: ["CChildProcess", "PortRunLoopDaemons", "PortRunLoopStressEngine", "PortRunLoopDBus",
                           "PortRunLoopRedis", "PortRunLoopKit"],
            path: "Tests/Soak/Tool"
        ),
        .testTarget(
            name: "PortRunLoopSoakTests",
            dependencies: ["PortRunLoopTestSupport"]
        ),
        .systemLibrary(
            name: "COpenSSL",
            path: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "PortRunLoopTLS",
            dependencies: ["COpenSSL", "PortRunLoopKit"]
        ),
        .testTarget(
            name: "PortRunLoopTLSTests",
            dependencies: ["PortRunLoopTestSupport", "PortRunLoopTLS", "PortRunLoopKit"]
        ),
        // Coverage-guided fuzzing of every decoder of outside bytes (Scripts/fuzz.sh; Reliability.md,
        // "Fuzzing"). The support: the byte splits a decoder is fed in and each target's driver
        // (libFuzzer's when built with -DFUZZING and -sanitize=fuzzer, else a replay of the files
        // named on the command line). The harness: one check per decoder family, which the targets
        // run and PortRunLoopFuzzTests replays the committed corpus (Tests/Fuzz/Corpus) through.
        .target(name: "PortRunLoopFuzzSupport", path: "Tests/Fuzz/Support"),
        .target(
            name: "PortRunLoopFuzzHarness",
            dependencies: ["PortRunLoopFuzzSupport", "PortRunLoopKit", "PortRunLoopBus", "PortRunLoopDBus", "PortRunLoopRedis",
                           "CDBus", "CHiredis"],
            path: "Tests/Fuzz/Harness"
        ),
        .executableTarget(name: "fuzz-cross-process-frame", dependencies: fuzzTargetDependencies, path: "Tests/Fuzz/Targets/fuzz-cross-process-frame"),
        .executableTarget(name: "fuzz-redis-payload", dependencies: fuzzTargetDependencies, path: "Tests/Fuzz/Targets/fuzz-redis-payload"),
        .executableTarget(name: "fuzz-dbus-signal", dependencies: fuzzTargetDependencies, path: "Tests/Fuzz/Targets/fuzz-dbus-signal"),
        .executableTarget(name: "fuzz-property-list", dependencies: fuzzTargetDependencies, path: "Tests/Fuzz/Targets/fuzz-property-list"),
        .executableTarget(name: "fuzz-match-rule", dependencies: fuzzTargetDependencies, path: "Tests/Fuzz/Targets/fuzz-match-rule"),
        .executableTarget(name: "fuzz-endpoint", dependencies: fuzzTargetDependencies, path: "Tests/Fuzz/Targets/fuzz-endpoint"),
        .testTarget(
            name: "PortRunLoopFuzzTests",
            dependencies: ["PortRunLoopFuzzHarness", "PortRunLoopFuzzSupport", "PortRunLoopKit", "PortRunLoopBus", "PortRunLoopDBus",
                           "PortRunLoopRedis", "CDBus"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
