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

/// The error the async `body` throws, or nil when it returns: a typed-throwing call's outcome as a
/// value (a task's result, an expectation on a specific case).
///
/// Thread-safety: runs `body` in the calling task.
public func thrownError<E: Error>(_ body: () async throws(E) -> Void) async -> E? {
    do throws(E) {
        try await body()
        return nil
    } catch {
        return error
    }
}
