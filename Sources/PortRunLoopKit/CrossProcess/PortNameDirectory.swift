import Foundation

/// Where cross-process port names live: a directory of this user's, mode 0700, holding for each
/// published name `<name>.sock` (the listening socket, 0600) and `<name>.lock` (held with
/// `flock(LOCK_EX)` by the publisher for its lifetime; it also records the publisher's
/// parameters for clients: see ``PublisherParameters``).
///
/// Thread-safety: a value type; `Sendable`.
package struct PortNameDirectory: Sendable {
    package let path: String

    /// The directory at `path` (not made or checked here).
    package init(path: String) { self.path = path }

    /// `$XDG_RUNTIME_DIR/portrunloop`, else `/tmp/portrunloop-<uid>`.
    static func defaultPath() -> String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/portrunloop"
        }
        return "/tmp/portrunloop-\(System.currentUserID())"
    }

    /// Makes the directory (0700) if it does not exist, then checks it: a real directory (not a
    /// symbolic link), owned by this user, with no permission for group or others.
    func prepare() throws(CrossProcessPortError) {
        if let error = System.makeDirectory(path) {
            throw .unsafeDirectory(path, reason: "mkdir failed: \(error)")
        }
        try verify()
    }

    /// Checks the directory without making it.
    func verify() throws(CrossProcessPortError) {
        let info: System.PathInfo?
        switch System.pathInfo(path) {
        case .success(let found): info = found
        case .failure(let error): throw .unsafeDirectory(path, reason: "lstat failed: \(error)")
        }
        guard let info else { throw .unsafeDirectory(path, reason: "it does not exist") }
        guard info.isDirectory else { throw .unsafeDirectory(path, reason: "not a directory (or a symbolic link)") }
        let uid = System.currentUserID()
        guard info.owner == uid else {
            throw .unsafeDirectory(path, reason: "owned by uid \(info.owner), not by this process's uid \(uid)")
        }
        guard info.permissions & 0o077 == 0 else {
            throw .unsafeDirectory(path, reason: "mode \(String(info.permissions, radix: 8)), expected 700")
        }
    }

    /// Throws unless `name` is 1…(room left in `sun_path`) characters of `[A-Za-z0-9._-]`, not
    /// starting with a dot.
    package func validate(_ name: String) throws(CrossProcessPortError) {
        guard !name.isEmpty else { throw .invalidName(name, reason: "empty") }
        guard name.first != "." else { throw .invalidName(name, reason: "starts with a dot") }
        for scalar in name.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-": continue
            default: throw .invalidName(name, reason: "character '\(scalar)' is not one of [A-Za-z0-9._-]")
            }
        }
        let room = System.maximumSocketPathLength - socketPath(for: "").utf8.count
        guard name.utf8.count <= room else {
            throw .invalidName(name, reason: "longer than the \(room) characters the socket path has room for")
        }
    }

    package func socketPath(for name: String) -> String { path + "/" + name + ".sock" }
    package func lockPath(for name: String) -> String { path + "/" + name + ".lock" }
}

/// What a publisher records in its lock file for the clients that connect to it: the wire
/// version, the credits each connection starts with (the port's queue limit at publication), and
/// the largest frame it accepts. One line: `PRLX 1 <credits> <maximum frame size>`.
///
/// Recording them in the file (rather than in a greeting frame on the connection) lets a client
/// send its first messages before the publisher's loop has accepted the connection: messages sent
/// while that loop does not run are held in the socket, up to the queue limit, as M4 holds them.
///
/// Thread-safety: a value type; `Sendable`.
package struct PublisherParameters: Sendable, Equatable {
    package var credits: Int
    package var maximumFrameSize: Int

    package var encoded: [UInt8] { Array("PRLX \(CrossProcessFrame.version) \(credits) \(maximumFrameSize)\n".utf8) }

    /// Parses the line strictly: exactly the line ``encoded`` writes for some values (numbers in
    /// plain decimal: no sign, no leading zero); nil for anything else.
    package init?(_ bytes: [UInt8]) {
        guard let text = String(bytes: bytes, encoding: .utf8), text.hasSuffix("\n") else { return nil }
        let fields = text.dropLast().split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 4, fields[0] == "PRLX", fields[1] == "\(CrossProcessFrame.version)",
              let credits = Self.decimal(fields[2]), credits >= 1, credits <= Int(UInt32.max),
              let size = Self.decimal(fields[3]), size >= CrossProcessFrame.headerSize else { return nil }
        self.credits = credits
        self.maximumFrameSize = size
    }

    /// A number as ``encoded`` writes it: digits only, no leading zero, within `Int`.
    private static func decimal(_ field: Substring) -> Int? {
        guard let first = field.utf8.first, first != UInt8(ascii: "0") || field.utf8.count == 1,
              field.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(field)
    }

    package init(credits: Int, maximumFrameSize: Int) {
        self.credits = credits
        self.maximumFrameSize = maximumFrameSize
    }
}
