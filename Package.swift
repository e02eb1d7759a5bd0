// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PortRunLoop",
    products: [
        .library(name: "PortRunLoopKit", targets: ["PortRunLoopKit"]),
        .executable(name: "portrunloop-demo", targets: ["PortRunLoopDemo"]),
        .executable(name: "portrunloop-stress", targets: ["PortRunLoopStress"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-service-context", from: "1.5.1"),
        // `swift package generate-documentation` (Scripts/build-docs.sh); no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
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
            dependencies: ["PortRunLoopKit"]
        ),
        // Reliability: the stress/load/model engine, shared by the stress tool and the tests.
        .target(
            name: "PortRunLoopStressEngine",
            dependencies: ["PortRunLoopKit"],
            path: "Sources/PortRunLoopStress/Engine"
        ),
        .executableTarget(
            name: "PortRunLoopStress",
            dependencies: ["PortRunLoopStressEngine", "PortRunLoopKit"],
            path: "Sources/PortRunLoopStress/Tool"
        ),
        // A program whose main thread runs PortRunLoop.main (MainQueueDrainTests runs it).
        .executableTarget(
            name: "MainQueueProbe",
            dependencies: ["PortRunLoopKit"]
        ),
        .testTarget(
            name: "PortRunLoopKitTests",
            dependencies: [
                "PortRunLoopKit",
                "PortRunLoopStressEngine",
                .product(name: "ServiceContextModule", package: "swift-service-context"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
