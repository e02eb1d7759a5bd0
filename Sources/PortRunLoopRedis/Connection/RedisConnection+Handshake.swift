import CHiredis
import PortRunLoopKit

/// Where a ``RedisConnection`` connects and how it introduces itself: the endpoint's server, a
/// sentinel, or a master a sentinel named (whose `ROLE` is checked).
///
/// Thread-safety: a value type.
struct RedisConnectionTarget: Sendable {
    var host: String
    var port: Int
    var username: String?
    var password: String?
    /// The server must answer `ROLE` with `master` before the connection counts as open.
    var checksRole = false

    /// `host:port` (`[host]:port` for IPv6).
    var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The step of the handshake whose answer a connection awaits.
///
/// Thread-safety: a value type.
enum HandshakeStep: Sendable {
    /// `AUTH [username] password`, or `PING` without a password.
    case greeting
    /// `ROLE`: the server must be a master.
    case role
}

/// The handshake (loop thread): `AUTH [username] password` when the target has a password, else
/// `PING`; then, for a target that checks it, `ROLE`. The connection is open (and the owner told)
/// once every step is answered, so a server that wants a password, refuses the one given, is not
/// Redis, does not answer (the command timeout), or is a replica where a master was expected,
/// fails the connection here, with the server's reason, rather than the first post or
/// subscription later. Each reply is awaited like any command's.
extension RedisConnection {
    func sendHandshake() {
        guard context != nil, handshakePending == nil, !isOpen else { return }
        let credentials = target.password.map { password in (target.username.map { [$0] } ?? []) + [password] } ?? []
        handshakePending = send(([greetingName] + credentials).map { Array($0.utf8) }) ? .greeting : nil
        if handshakePending == nil { drop("hiredis refused the handshake") }
    }

    /// `AUTH` with a password, `PING` without.
    private var greetingName: String { target.password == nil ? "PING" : "AUTH" }

    /// A handshake step's answer (inside hiredis; nil: abandoned as the context is freed).
    func handshakeAnswered(_ reply: UnsafeMutablePointer<redisReply>?) {
        let step = handshakePending
        handshakePending = nil
        guard let reply, context != nil else { return }
        noteReply()
        if reply.pointee.type == REDIS_REPLY_ERROR {
            let command = step == .role ? "ROLE" : greetingName
            refuse("\(command) refused: \(RedisReply.string(reply.pointee) ?? "error")")
            return
        }
        if step == .greeting, target.checksRole {
            handshakePending = send([Array("ROLE".utf8)]) ? .role : nil
            if handshakePending == nil { refuse("hiredis refused the ROLE check") }
            return
        }
        if step == .role {
            let role = Self.role(reply.pointee)
            guard role == "master" else {
                refuse("not the master (ROLE: \(role ?? "unreadable"))")
                return
            }
        }
        isOpen = true
        if readsRepliesInBatches, let context { setReceiveLowWater(context.pointee.c.fd, Self.replyBatchBytes) }
        later { connection in
            guard connection.context != nil else { return }
            connection.owner?.connectionOpened(connection)
        }
    }

    /// Ends the connection with `reason` from a later turn (hiredis is not re-entered to free its
    /// context).
    private func refuse(_ reason: String) {
        if endReason == nil { endReason = reason }
        later { $0.drop(reason) }
    }

    /// The first element of a `ROLE` reply: `master`, `slave` or `sentinel`.
    private static func role(_ reply: redisReply) -> String? {
        guard reply.type == REDIS_REPLY_ARRAY, reply.elements >= 1, let first = reply.element?[0]?.pointee else { return nil }
        return RedisReply.string(first)
    }
}
