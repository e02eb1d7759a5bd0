import Foundation

/// A plain TCP client of the test's redis-server speaking RESP itself, for bytes `redis-cli`
/// cannot carry in an argument (a binary payload holds NULs): publishes exact payloads, and reads
/// a subscription's messages as bytes. Reads wait at most 20 s (`SO_RCVTIMEO`).
///
/// Thread-safety: one thread at a time.
final class RawRedisClient {
    private let fd: Int32
    private var input: [UInt8] = []
    private var consumed = 0

    enum Failure: Error { case connect(Int32), io(String), protocolError(String) }

    /// One RESP reply.
    enum Reply: Equatable {
        case status(String), error(String), integer(Int), bulk([UInt8]?), array([Reply])
    }

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure.connect(errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let error = errno
            close(fd)
            throw Failure.connect(error)
        }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Writes one command (without reading its reply).
    func send(_ arguments: [[UInt8]]) throws {
        var bytes = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            bytes += Array("$\(argument.count)\r\n".utf8) + argument + Array("\r\n".utf8)
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { throw Failure.io("write: errno \(errno)") }
            offset += written
        }
    }

    /// `PUBLISH channel payload`; the number of subscribers that got it.
    @discardableResult
    func publish(_ channel: String, _ payload: [UInt8]) throws -> Int {
        try publish(channel: Array(channel.utf8), payload)
    }

    /// `PUBLISH` to a channel given as bytes (any bytes, UTF-8 or not).
    @discardableResult
    func publish(channel: [UInt8], _ payload: [UInt8]) throws -> Int {
        try send([Array("PUBLISH".utf8), channel, payload])
        guard case .integer(let receivers) = try reply() else { throw Failure.protocolError("PUBLISH answered no integer") }
        return receivers
    }

    /// `SUBSCRIBE channel`, confirmed.
    func subscribe(_ channel: String) throws {
        try send([Array("SUBSCRIBE".utf8), Array(channel.utf8)])
        guard case .array(let parts) = try reply(), parts.first == .bulk(Array("subscribe".utf8)) else {
            throw Failure.protocolError("SUBSCRIBE not confirmed")
        }
    }

    /// The payload of the next message of a subscription.
    func nextMessage() throws -> [UInt8] {
        guard case .array(let parts) = try reply(), parts.count == 3, parts[0] == .bulk(Array("message".utf8)),
              case .bulk(let payload?) = parts[2] else { throw Failure.protocolError("not a message") }
        return payload
    }

    func reply() throws -> Reply {
        let line = try readLine()
        guard let kind = line.first else { throw Failure.protocolError("empty line") }
        let rest = String(decoding: line.dropFirst(), as: UTF8.self)
        switch kind {
        case UInt8(ascii: "+"): return .status(rest)
        case UInt8(ascii: "-"): return .error(rest)
        case UInt8(ascii: ":"): return .integer(Int(rest) ?? 0)
        case UInt8(ascii: "$"):
            guard let length = Int(rest) else { throw Failure.protocolError("bulk length \(rest)") }
            if length < 0 { return .bulk(nil) }
            let bytes = try read(length + 2)
            return .bulk(Array(bytes.prefix(length)))
        case UInt8(ascii: "*"):
            guard let count = Int(rest) else { throw Failure.protocolError("array count \(rest)") }
            return .array(try (0..<max(count, 0)).map { _ in try reply() })
        default:
            throw Failure.protocolError("reply type \(kind)")
        }
    }

    private func readLine() throws -> [UInt8] {
        while true {
            if let end = input[consumed...].firstIndex(of: UInt8(ascii: "\n")), end > consumed, input[end - 1] == UInt8(ascii: "\r") {
                let line = Array(input[consumed..<(end - 1)])
                consumed = end + 1
                return line
            }
            try fill()
        }
    }

    private func read(_ count: Int) throws -> [UInt8] {
        while input.count - consumed < count { try fill() }
        defer { consumed += count }
        return Array(input[consumed..<(consumed + count)])
    }

    private func fill() throws {
        if consumed > 0 {
            input.removeFirst(consumed)
            consumed = 0
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard got > 0 else { throw Failure.io(got == 0 ? "closed" : "recv: errno \(errno)") }
        input += chunk[..<got]
    }
}
