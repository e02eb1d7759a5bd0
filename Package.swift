// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "PortRunLoop",
    products: [
        .library(name: "PortRunLoopKit", targets: ["PortRunLoopKit"]),
        .executable(name: "portrunloop-demo", targets: ["PortRunLoopDemo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibEvent",
            path: "CLibEvent",
            pkgConfig: "libevent_pthreads",
            providers: [.apt(["libevent-dev"])]
        ),
        .target(
            name: "PortRunLoopKit",
            dependencies: [
                "CLibEvent",
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .executableTarget(
            name: "PortRunLoopDemo",
            dependencies: ["PortRunLoopKit"]
        ),
        .testTarget(
            name: "PortRunLoopKitTests",
            dependencies: ["PortRunLoopKit"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
