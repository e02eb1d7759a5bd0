import CHiredis

/// A bound on the arrays a server's reply may declare. hiredis 0.14 allocates an array reply's
/// element table from the count in its header (`*2147483647` asks for 16 GB at once) before any
/// element has arrived, and it has no limit of its own to set (`maxelements` came in 1.0). Every
/// reply this library reads is a short array (a pub/sub push of 3 or 4 elements, a subscription's
/// confirmation of 3) or no array at all, so an array of more than ``maximumElements`` is
/// refused: hiredis' reader fails ("Out of memory", its error for a refused allocation), the
/// connection ends and is reopened, and nothing is allocated for it.
///
/// Thread-safety: ``install(on:)`` on the thread that owns the reader; the function table it
/// installs is immutable and shared.
package enum RedisReplyLimit {
    /// The most elements an array reply may declare.
    package static let maximumElements: Int32 = 1024

    /// hiredis' own table of reply functions (one, static, for every reader), read off a fresh reader.
    private nonisolated(unsafe) static let defaultTable: UnsafeMutablePointer<redisReplyObjectFunctions>? = {
        guard let reader = redisReaderCreate() else { return nil }
        defer { redisReaderFree(reader) }
        return reader.pointee.fn
    }()

    private static var defaults: redisReplyObjectFunctions? { defaultTable?.pointee }

    /// hiredis' functions with the array bound.
    private nonisolated(unsafe) static let limited: UnsafeMutablePointer<redisReplyObjectFunctions>? = {
        guard var functions = defaults, functions.createArray != nil else { return nil }
        functions.createArray = { task, elements in
            guard elements <= RedisReplyLimit.maximumElements, let create = RedisReplyLimit.defaults?.createArray else { return nil }
            return create(task, elements)
        }
        let table = UnsafeMutablePointer<redisReplyObjectFunctions>.allocate(capacity: 1)
        table.initialize(to: functions)
        return table
    }()

    /// Makes `reader` refuse arrays of more than ``maximumElements`` (a reader whose functions are
    /// not hiredis' own is left as it is).
    package static func install(on reader: UnsafeMutablePointer<redisReader>?) {
        guard let reader, let limited, reader.pointee.fn == defaultTable else { return }
        reader.pointee.fn = limited
    }
}
