/// The buffer a loop's stream connections read into: one per loop, not one per connection, so
/// that 10,000 idle connections hold no read memory, and a read allocates nothing. A connection's
/// ``StreamConnection/onRead`` sees the bytes in place.
///
/// A read handler may run the loop nested, and a connection read by the nested run must not
/// overwrite the bytes the outer handler is still looking at: while the buffer is lent out, a
/// read borrows a buffer of its own for the call (rare; counted in ``nestedBorrows``).
///
/// Thread-safety: the loop's thread only (a field of ``PortRunLoop``'s owner state).
final class StreamReadBuffer {
    /// Bytes read per call: large enough that a bulk transfer takes few calls, small enough to
    /// stay in the cache.
    static let capacity = 64 * 1024

    private var memory: UnsafeMutableRawBufferPointer?
    private var lent = false
    /// Reads made while the buffer was lent out to an outer handler.
    private(set) var nestedBorrows = 0

    /// Lends the buffer to `body` (a buffer of its own while the loop's is lent out).
    func withBuffer<Result>(_ body: (UnsafeMutableRawBufferPointer) -> Result) -> Result {
        if lent {
            nestedBorrows += 1
            let own = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.capacity, alignment: 16)
            defer { own.deallocate() }
            return body(own)
        }
        let buffer = memory ?? {
            let made = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.capacity, alignment: 16)
            memory = made
            return made
        }()
        lent = true
        defer { lent = false }
        return body(buffer)
    }

    deinit { memory?.deallocate() }
}
