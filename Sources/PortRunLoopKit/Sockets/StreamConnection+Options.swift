extension StreamConnection {
    /// How a connection buffers and what it sets on its socket.
    ///
    /// Thread-safety: a value type; `Sendable`.
    public struct Options: Sendable, Hashable {
        /// When the outbound queue drains to this many bytes after passing ``highWaterMark``, the
        /// connection is writable again (``StreamConnectionEvent/writabilityChanged(_:)`` true).
        ///
        /// Thread-safety: a value type.
        public var lowWaterMark = 32 * 1024
        /// When the outbound queue passes this many bytes, the connection is not writable
        /// (``StreamConnectionEvent/writabilityChanged(_:)`` false): a writer should wait for it to
        /// become writable again (``AsyncStreamConnection/write(_:)`` does).
        ///
        /// Thread-safety: a value type.
        public var highWaterMark = 64 * 1024
        /// The most bytes the outbound queue may hold. A write past it closes the connection with
        /// ``StreamConnectionError/outboundLimitExceeded(limit:)``: a writer that ignores the water
        /// marks against a peer that does not read cannot grow the queue without bound.
        ///
        /// Thread-safety: a value type.
        public var outboundLimit = 16 * 1024 * 1024
        /// Whether the connection stays open for writing after the peer shut its output down
        /// (``StreamConnectionEvent/inputEnded``). false (the default): it sends what is queued and
        /// closes.
        ///
        /// Thread-safety: a value type.
        public var allowsHalfClosure = false
        /// `TCP_NODELAY` (TCP only): small writes go out at once instead of waiting to be
        /// coalesced (Nagle's algorithm).
        ///
        /// Thread-safety: a value type.
        public var noDelay = true
        /// `SO_SNDBUF`, nil for the kernel's default.
        ///
        /// Thread-safety: a value type.
        public var sendBufferSize: Int? = nil
        /// `SO_RCVBUF`, nil for the kernel's default.
        ///
        /// Thread-safety: a value type.
        public var receiveBufferSize: Int? = nil
        /// How long the transport's opening (a TLS handshake) may take before the connection is
        /// closed with ``StreamConnectionError/timedOut(_:)``: a peer that connects and says
        /// nothing holds a descriptor no longer than this.
        ///
        /// Thread-safety: a value type.
        public var handshakeTimeout: Double = 10

        /// The defaults: 32 KiB / 64 KiB water marks, a 16 MiB limit, no half-closure, `TCP_NODELAY`.
        ///
        /// Thread-safety: a pure function.
        public init() {}

        /// Sets the socket options on a new connection's descriptor (failures to set a size are
        /// ignored: the kernel's default stays).
        func apply(to fd: Int32) {
            if noDelay { System.setSocketOption(fd, .noDelay, 1) } // fails harmlessly on a Unix socket
            if let sendBufferSize { System.setSocketOption(fd, .sendBufferSize, Int32(clamping: sendBufferSize)) }
            if let receiveBufferSize { System.setSocketOption(fd, .receiveBufferSize, Int32(clamping: receiveBufferSize)) }
        }
    }
}
