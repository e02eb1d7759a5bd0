import PortRunLoopKit

/// One of our channels with `PortRunLoop.serviceContextCapture` set to `.always` while it exists:
/// the same hand-off, reading the caller's `ServiceContext` per message as a process with a tracer
/// bootstrapped does (the producers set none), to show in the same run what capturing costs. The
/// other rows run with the default, `.automatic`, which is off without an instrument.
public final class WithContextCapture: MessageChannel, @unchecked Sendable {
    private let inner: any MessageChannel

    /// Turns capturing on, then makes the channel.
    public init(_ make: () throws -> any MessageChannel) rethrows {
        PortRunLoop.serviceContextCapture = .always
        do {
            inner = try make()
        } catch {
            PortRunLoop.serviceContextCapture = .automatic
            throw error
        }
    }

    public func send() { inner.send() }

    public var wakeSignals: Int? { inner.wakeSignals }

    /// Shuts the channel down and goes back to the default.
    public func shutDown() {
        inner.shutDown()
        PortRunLoop.serviceContextCapture = .automatic
    }
}
