extension AsyncStreamConnection {
    /// The bytes an ``AsyncStreamConnection`` reads, as an `AsyncSequence` of chunks (each what one
    /// read returned, at most 64 KiB), in order: ``AsyncStreamConnection/inbound``.
    ///
    /// The sequence ends (nil) at end of input, or throws the error that ended the connection once
    /// the chunks read before it were returned. Cancelling the task waiting in `next()` closes the
    /// connection and ends the sequence (nil). Chunks the consumer has not taken are buffered up to
    /// ``AsyncStreamConnection/inboundBufferLimit`` bytes, then reading pauses until the consumer
    /// drained the buffer to half the limit (``statistics`` counts the pauses).
    ///
    /// Thread-safety: `Sendable`; iterate from one task at a time (two tasks waiting in `next()` at
    /// once are a programmer error, caught by a precondition).
    public struct InboundBytes: AsyncSequence, Sendable {
        /// A run of bytes, as one read returned it.
        ///
        /// Thread-safety: a value type.
        public typealias Element = [UInt8]
        /// Why the connection ended, when not at a clean end of input.
        ///
        /// Thread-safety: a value type.
        public typealias Failure = StreamConnectionError

        /// Counts since the connection was wrapped.
        ///
        /// Thread-safety: a value type; `Sendable`.
        public struct Statistics: Sendable, Hashable {
            /// Bytes read from the connection.
            ///
            /// Thread-safety: a value type.
            public var receivedBytes: Int
            /// Bytes returned by `next()`.
            ///
            /// Thread-safety: a value type.
            public var deliveredBytes: Int
            /// Bytes read and not yet returned.
            ///
            /// Thread-safety: a value type.
            public var bufferedBytes: Int
            /// Times reading paused because the buffer passed the limit.
            ///
            /// Thread-safety: a value type.
            public var readingPauses: Int
            /// True once the sequence ended (end of input, the connection's close, a cancellation).
            ///
            /// Thread-safety: a value type.
            public var isFinished: Bool
        }

        let connection: AsyncStreamConnection

        /// A snapshot of the counts.
        ///
        /// Thread-safety: any thread.
        public var statistics: Statistics {
            let counts = connection.inboundBuffer.statistics
            return Statistics(receivedBytes: counts.received, deliveredBytes: counts.delivered,
                              bufferedBytes: counts.buffered, readingPauses: counts.holds, isFinished: counts.isEnded)
        }

        /// Thread-safety: any thread; iterate from one task at a time.
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(connection: connection) }

        /// Iterates ``InboundBytes``.
        ///
        /// Thread-safety: use from one task at a time (it is not `Sendable`).
        public struct AsyncIterator: AsyncIteratorProtocol {
            /// See ``InboundBytes/Failure``.
            ///
            /// Thread-safety: a value type.
            public typealias Failure = StreamConnectionError

            let connection: AsyncStreamConnection

            /// The next chunk, waiting for one; nil at end of input (or once cancelled).
            ///
            /// Thread-safety: one task at a time.
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(StreamConnectionError) -> [UInt8]? {
                let connection = self.connection
                return try await connection.inboundBuffer.next(
                    isolation: actor,
                    whenReleased: {
                        let core = connection.core
                        _ = connection.loop.onOwner { _ in core.value.resumeReading() }
                    },
                    whenCancelled: { connection.closeNow() })
            }

            /// ``next(isolation:)`` without an isolation.
            ///
            /// Thread-safety: one task at a time.
            public mutating func next() async throws(StreamConnectionError) -> [UInt8]? {
                try await next(isolation: nil)
            }
        }
    }
}
