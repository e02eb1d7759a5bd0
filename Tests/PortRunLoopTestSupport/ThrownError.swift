/// The error `body` throws, or nil when it returns: for a typed-throwing call made on a thread of
/// the test's own (``onRefusingThread(_:name:timeout:_:)``), whose result comes back as a value.
///
/// Thread-safety: runs `body` on the calling thread.
public func thrownError<E: Error>(_ body: () throws(E) -> Void) -> E? {
    do throws(E) {
        try body()
        return nil
    } catch {
        return error
    }
}
