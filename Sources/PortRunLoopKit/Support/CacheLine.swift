/// Allocation on cache lines of their own, for state that two CPUs touch at different rates.
///
/// A block from `malloc` is 16-byte aligned and may share a 64-byte cache line with a neighbour
/// allocated just before or after it; when one CPU writes the neighbour per message and another
/// reads this block per message, every write invalidates the reader's copy ("false sharing").
/// These blocks start on a line boundary and their size is rounded up to whole lines, so nothing
/// else lives on their lines.
///
/// Thread-safety: stateless functions.
enum CacheLine {
    /// The cache line size assumed (x86-64 and most AArch64 cores).
    static let size = 64

    /// Allocates and initializes one `T` on cache lines of its own. Free with ``free(_:)``.
    static func allocate<T: ~Copyable>(_ value: consuming T) -> UnsafeMutablePointer<T> {
        let bytes = (MemoryLayout<T>.stride + size - 1) / size * size
        let raw = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(bytes, size),
                                                   alignment: Swift.max(size, MemoryLayout<T>.alignment))
        let pointer = raw.bindMemory(to: T.self, capacity: 1)
        pointer.initialize(to: value)
        return pointer
    }

    /// Deinitializes and frees a block from ``allocate(_:)``.
    static func free<T: ~Copyable>(_ pointer: UnsafeMutablePointer<T>) {
        pointer.deinitialize(count: 1)
        UnsafeMutableRawPointer(pointer).deallocate()
    }
}
