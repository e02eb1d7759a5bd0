// The stream-socket calls of connections and listeners (Sources/PortRunLoopKit/Sockets/): TCP over
// IPv4 and IPv6 and Unix stream sockets, their addresses as one opaque value, and the socket
// options a server sets. Support/System+StreamSockets.swift is their only user.
#ifndef PORTRUNLOOP_STREAM_SOCKETS_H
#define PORTRUNLOOP_STREAM_SOCKETS_H

#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <stddef.h>

/// One socket address of any family this library speaks (IPv4, IPv6, Unix), with its length.
typedef struct {
    struct sockaddr_storage storage;
    socklen_t length;
} portrunloop_socket_address;

/// `getaddrinfo(host, port, {AF_UNSPEC, SOCK_STREAM, flags})` into up to `capacity` addresses, in
/// the order the resolver returned them. `passive`: for a listener (a NULL host is every local
/// address). `numericOnly`: `AI_NUMERICHOST`, never asks a name server (so never blocks). Returns
/// the count, or a negative `EAI_*` code (`gai_strerror` names it).
static inline int portrunloop_resolve(const char *host, int port, int passive, int numericOnly,
                                      portrunloop_socket_address *addresses, int capacity) {
    struct addrinfo hints, *results = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) | (numericOnly ? AI_NUMERICHOST : 0);
    char service[8];
    if (port < 0 || port > 65535) return EAI_SERVICE;
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(host, service, &hints, &results);
    if (rc != 0) return rc < 0 ? rc : -rc;
    int count = 0;
    for (struct addrinfo *entry = results; entry && count < capacity; entry = entry->ai_next) {
        if (entry->ai_addrlen > sizeof addresses[count].storage) continue;
        memset(&addresses[count], 0, sizeof addresses[count]);
        memcpy(&addresses[count].storage, entry->ai_addr, entry->ai_addrlen);
        addresses[count].length = entry->ai_addrlen;
        count++;
    }
    freeaddrinfo(results);
    return count;
}

/// The text of an `EAI_*` code from ``portrunloop_resolve`` (negative or positive).
static inline const char *portrunloop_resolve_error(int code) { return gai_strerror(code); }

/// A Unix socket address for `path`; -1 with `ENAMETOOLONG` for an empty or too long path.
static inline int portrunloop_unix_address(const char *path, portrunloop_socket_address *address) {
    size_t length = strlen(path);
    struct sockaddr_un *unix_address = (struct sockaddr_un *)&address->storage;
    if (length == 0 || length >= sizeof unix_address->sun_path) { errno = ENAMETOOLONG; return -1; }
    memset(address, 0, sizeof *address);
    unix_address->sun_family = AF_UNIX;
    memcpy(unix_address->sun_path, path, length);
    address->length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length + 1);
    return 0;
}

/// The numeric host (into `host`, `capacity` bytes) and port of an IPv4 or IPv6 address, or the
/// path of a Unix one (port -1). -1 for another family.
static inline int portrunloop_describe_address(const portrunloop_socket_address *address, char *host,
                                               int capacity, int *port) {
    switch (address->storage.ss_family) {
    case AF_INET: {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)&address->storage;
        if (!inet_ntop(AF_INET, &v4->sin_addr, host, (socklen_t)capacity)) return -1;
        *port = ntohs(v4->sin_port);
        return 0;
    }
    case AF_INET6: {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&address->storage;
        if (!inet_ntop(AF_INET6, &v6->sin6_addr, host, (socklen_t)capacity)) return -1;
        *port = ntohs(v6->sin6_port);
        return 0;
    }
    case AF_UNIX: {
        const struct sockaddr_un *un = (const struct sockaddr_un *)&address->storage;
        size_t pathLength = address->length > offsetof(struct sockaddr_un, sun_path)
            ? address->length - offsetof(struct sockaddr_un, sun_path) : 0;
        if (pathLength > sizeof un->sun_path) pathLength = sizeof un->sun_path;
        size_t copy = strnlen(un->sun_path, pathLength);
        if ((int)copy >= capacity) copy = (size_t)capacity - 1;
        memcpy(host, un->sun_path, copy);
        host[copy] = 0;
        *port = -1;
        return 0;
    }
    default: return -1;
    }
}

/// `socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)`.
static inline int portrunloop_stream_socket(int family) {
    return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

/// `setsockopt` of one int-valued option. `which`: 1 `SO_REUSEADDR`, 2 `SO_REUSEPORT`,
/// 3 `TCP_NODELAY`, 4 `SO_SNDBUF`, 5 `SO_RCVBUF`, 6 `IPV6_V6ONLY`, 7 `SO_KEEPALIVE`.
static inline int portrunloop_set_socket_option(int fd, int which, int value) {
    int level = SOL_SOCKET, name;
    switch (which) {
    case 1: name = SO_REUSEADDR; break;
    case 2: name = SO_REUSEPORT; break;
    case 3: level = IPPROTO_TCP; name = TCP_NODELAY; break;
    case 4: name = SO_SNDBUF; break;
    case 5: name = SO_RCVBUF; break;
    case 6: level = IPPROTO_IPV6; name = IPV6_V6ONLY; break;
    case 7: name = SO_KEEPALIVE; break;
    default: errno = EINVAL; return -1;
    }
    return setsockopt(fd, level, name, &value, sizeof value);
}

/// `getsockopt(SO_ERROR)`: the pending error of a socket (a non-blocking connect's outcome), or
/// -1 when the call itself failed.
static inline int portrunloop_socket_error(int fd) {
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) return -1;
    return error;
}

static inline int portrunloop_bind(int fd, const portrunloop_socket_address *address) {
    return bind(fd, (const struct sockaddr *)&address->storage, address->length);
}

static inline int portrunloop_stream_connect(int fd, const portrunloop_socket_address *address) {
    return connect(fd, (const struct sockaddr *)&address->storage, address->length);
}

/// `getsockname` (`peer` 0) or `getpeername` (`peer` 1) into `address`.
static inline int portrunloop_socket_name(int fd, int peer, portrunloop_socket_address *address) {
    memset(address, 0, sizeof *address);
    address->length = sizeof address->storage;
    return peer ? getpeername(fd, (struct sockaddr *)&address->storage, &address->length)
                : getsockname(fd, (struct sockaddr *)&address->storage, &address->length);
}

/// `send(fd, bytes, length, MSG_NOSIGNAL | MSG_DONTWAIT)` on a stream socket.
static inline long portrunloop_stream_send(int fd, const void *bytes, unsigned long length) {
    return (long)send(fd, bytes, length, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/// `recv(fd, buffer, capacity, MSG_DONTWAIT)` on a stream socket.
static inline long portrunloop_stream_receive(int fd, void *buffer, unsigned long capacity) {
    return (long)recv(fd, buffer, capacity, MSG_DONTWAIT);
}

/// `shutdown(fd, SHUT_WR)`: the peer reads end of stream after what was sent.
static inline int portrunloop_shutdown_output(int fd) { return shutdown(fd, SHUT_WR); }

#endif
