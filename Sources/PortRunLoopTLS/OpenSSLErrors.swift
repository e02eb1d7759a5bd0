internal import COpenSSL

/// OpenSSL's per-thread error queue, read into words.
///
/// Thread-safety: a stateless namespace; each call reads the calling thread's queue.
enum OpenSSLErrors {
    /// Empties the calling thread's error queue and returns its errors' texts, oldest first
    /// (`"unknown error"` when it was empty).
    static func drain() -> String {
        var texts: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while case let code = ERR_get_error(), code != 0 {
            ERR_error_string_n(code, &buffer, buffer.count)
            texts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return texts.isEmpty ? "unknown error" : texts.joined(separator: "; ")
    }
}
