/// Which message bus a ``BusNotificationCenter`` connects to.
///
/// Each transport's module makes its own endpoints with static members (PortRunLoopDBus:
/// `session`, `system`, `dbus(address:)`), so code that names an endpoint keeps compiling when a
/// transport is added.
///
/// Thread-safety: a value type; `Sendable`.
public struct BusEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The transport's own form of the endpoint: what the endpoint is compared, hashed and
    /// described by, and what its transport reads back.
    package let address: any BusEndpointAddress

    /// The endpoint a transport knows as `address`.
    package init(_ address: some BusEndpointAddress) { self.address = address }

    /// An endpoint of a transport that reads nothing back from it (such as PortRunLoopRedis), named
    /// by `description` in logs; another transport's initialiser refuses it.
    package static func transport(_ description: String) -> BusEndpoint { BusEndpoint(DescribedAddress(description: description)) }

    /// The address's description, e.g. `session bus`.
    ///
    /// Thread-safety: a value type.
    public var description: String { address.description }

    /// Equal when both name the same address of the same transport.
    ///
    /// Thread-safety: a value type.
    public static func == (lhs: BusEndpoint, rhs: BusEndpoint) -> Bool { AnyHashable(lhs.address) == AnyHashable(rhs.address) }

    /// Hashes the address.
    ///
    /// Thread-safety: a value type.
    public func hash(into hasher: inout Hasher) { hasher.combine(AnyHashable(address)) }
}

/// A transport's form of a ``BusEndpoint``.
///
/// Thread-safety: conforming types are `Sendable` values.
package protocol BusEndpointAddress: Hashable, Sendable, CustomStringConvertible {}

/// An endpoint known only by its description (``BusEndpoint/transport(_:)``).
///
/// Thread-safety: a value type.
struct DescribedAddress: BusEndpointAddress {
    let description: String
}
