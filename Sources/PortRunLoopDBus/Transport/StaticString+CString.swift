extension StaticString {
    /// The literal as a C string for libdbus: a string literal's bytes are stored NUL-terminated,
    /// so this is the literal itself. (A `String` passed where C wants a `const char *` is copied
    /// into a new array when it is small, 15 bytes or fewer, as `"Posted"` is.)
    ///
    /// Thread-safety: any thread (immutable storage in the binary).
    var cString: UnsafePointer<CChar> {
        UnsafeRawPointer(utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
