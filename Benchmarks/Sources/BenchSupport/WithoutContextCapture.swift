import PortRunLoopKit

/// One of our channels with `PortRunLoop.capturesServiceContext` turned off while it exists: the
/// same hand-off without reading the caller's `ServiceContext` per message, to show in the same run
/// what capturing costs (the producers never set a context).
public final class WithoutContextCapture: MessageChannel, @unchecked Sendable {
    private let inner: any MessageChannel

    /// Turns capturing off, then makes the channel.
    public init(_ make: () throws -> any MessageChannel) rethrows {
        PortRunLoop.capturesServiceContext = false
        do {
            inner = try make()
        } catch {
            PortRunLoop.capturesServiceContext = true
            throw error
        }
    }

    public func send() { inner.send() }

    public var wakeSignals: Int? { inner.wakeSignals }

    /// Shuts the channel down and turns capturing back on.
    public func shutDown() {
        inner.shutDown()
        PortRunLoop.capturesServiceContext = true
    }
}
