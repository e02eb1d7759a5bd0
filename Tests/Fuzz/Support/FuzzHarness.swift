/// One decoder family's fuzz check: what a fuzz target runs on every input, and what the
/// corpus replay runs on every committed file.
///
/// Thread-safety: conforming types are stateless namespaces (a check may keep caches of its
/// own, used by one thread).
package protocol FuzzHarness {
    /// The fuzz target's name (`fuzz-redis-payload`): its executable and its corpus folder.
    static var targetName: String { get }
    /// Feeds `bytes` to the decoders (whole, and split where they read a stream) and checks what
    /// they make of them. Throws the first broken invariant; a decoder that traps ends the process
    /// (libFuzzer reports it).
    static func run(_ bytes: UnsafeRawBufferPointer) throws(InvariantViolation)
    /// The seed corpus: valid encodings made by the library's own encoders, and edge cases.
    static func seeds() -> [FuzzSeed]
}

/// One file of a seed corpus.
///
/// Thread-safety: a value type.
package struct FuzzSeed: Sendable {
    /// The file's name (no folder).
    package let name: String
    /// Its bytes.
    package let bytes: [UInt8]

    /// A seed named `name` holding `bytes`.
    package init(_ name: String, _ bytes: [UInt8]) {
        self.name = name
        self.bytes = bytes
    }
}

/// A broken invariant: what a decoder made of an input is not what it must be.
///
/// Thread-safety: a value type.
package struct InvariantViolation: Error, CustomStringConvertible, Sendable, Equatable {
    /// What was expected and what came.
    package let description: String

    /// A violation described by `description`.
    package init(_ description: String) { self.description = description }
}

/// Throws an ``InvariantViolation`` saying `message` unless `condition` holds.
package func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(InvariantViolation) {
    if !condition { throw InvariantViolation(message()) }
}

extension FuzzHarness {
    /// ``run(_:)`` on an array's bytes.
    package static func run(_ bytes: [UInt8]) throws(InvariantViolation) {
        let violation: InvariantViolation? = bytes.withUnsafeBytes { buffer in
            do throws(InvariantViolation) { try run(buffer) } catch { return error }
            return nil
        }
        if let violation { throw violation }
    }
}
