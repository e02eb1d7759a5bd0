/// A TLS protocol version this module speaks.
///
/// Thread-safety: a value type; `Sendable`.
public enum TLSProtocolVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// TLS 1.2 (RFC 5246).
    case v1_2
    /// TLS 1.3 (RFC 8446).
    case v1_3

    /// OpenSSL's number of the version (`TLS1_2_VERSION`, `TLS1_3_VERSION`).
    var openSSLValue: Int32 {
        switch self {
        case .v1_2: 0x0303
        case .v1_3: 0x0304
        }
    }

    /// The version OpenSSL negotiated. The minimum is TLS 1.2 and OpenSSL 3 speaks nothing past
    /// TLS 1.3, so any other number is newer than 1.3.
    init(openSSLValue: Int32) {
        self = openSSLValue <= 0x0303 ? .v1_2 : .v1_3
    }

    /// "TLSv1.2", "TLSv1.3" (OpenSSL's names).
    ///
    /// Thread-safety: a pure function.
    public var description: String {
        switch self {
        case .v1_2: "TLSv1.2"
        case .v1_3: "TLSv1.3"
        }
    }
}
