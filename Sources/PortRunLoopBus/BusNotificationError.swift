/// Why a ``BusNotificationCenter`` call failed.
///
/// Thread-safety: a value type; `Sendable`.
public enum BusNotificationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bus could not be reached or refused the connection (the daemon's message).
    case connectionFailed(String)
    /// The connection to the bus is gone (the daemon exited, or the center was closed): nothing
    /// can be posted or observed through this center any more.
    case disconnected
    /// The notification name is not usable on the transport (empty, or not valid UTF-8 without
    /// NUL, or longer than ``BusNotificationCenter/maximumNameLength``).
    case invalidName(String)
    /// The notification object is not usable on the transport (contains NUL, or longer than
    /// ``BusNotificationCenter/maximumNameLength``).
    case invalidObject(String)
    /// A userInfo value is not a property-list value the wire format carries; the key path names
    /// the value (e.g. `"options.when"`), the type names what it was.
    case unsupportedUserInfoValue(keyPath: String, type: String)
    /// A match rule field is not valid D-Bus (the field and why).
    case invalidMatchRule(String)
    /// The bus answered a call with an error (its name and message), e.g. a refused match rule.
    case busError(name: String, message: String)
    /// The bus did not answer a call within the center's ``BusNotificationCenter/callTimeout``.
    case timedOut
    /// libdbus could not allocate memory for a message.
    case outOfMemory

    /// A one-line explanation.
    ///
    /// Thread-safety: a value type.
    public var description: String {
        switch self {
        case .connectionFailed(let why): "could not connect to the bus: \(why)"
        case .disconnected: "the bus connection is closed"
        case .invalidName(let why): "invalid notification name: \(why)"
        case .invalidObject(let why): "invalid notification object: \(why)"
        case .unsupportedUserInfoValue(let path, let type): "userInfo value at '\(path)' of type \(type) is not a property-list value the bus carries"
        case .invalidMatchRule(let why): "invalid match rule: \(why)"
        case .busError(let name, let message): "the bus answered \(name): \(message)"
        case .timedOut: "the bus did not answer in time"
        case .outOfMemory: "libdbus is out of memory"
        }
    }
}
