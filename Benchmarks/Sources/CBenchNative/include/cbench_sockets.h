// Socket set-up for the server-shaped scenarios, in C so that Swift needs no sockaddr juggling.
//
// Like every header of this target: no system headers (they would make clang build a second copy of
// glibc's types that clashes with SwiftGlibc in every Swift file importing both). Plain C types only.
//
// Thread-safety: every function is safe from any thread (each only makes or configures descriptors).
#ifndef PORTRUNLOOP_CBENCH_SOCKETS_H
#define PORTRUNLOOP_CBENCH_SOCKETS_H

/// A connected AF_UNIX SOCK_STREAM pair, both ends non-blocking and close-on-exec.
/// Returns 0, or -1 with errno set. Thread-safety: any thread.
int cbench_socketpair_nonblocking(int fds[2]);

/// A non-blocking TCP listening socket on 127.0.0.1, port chosen by the kernel (written to `*port`),
/// SO_REUSEADDR set. Returns the descriptor, or -1 with errno set. Thread-safety: any thread.
int cbench_tcp_listen_loopback(int backlog, int *port);

/// accept4(2) one pending connection of `listen_fd`, non-blocking and close-on-exec, with
/// TCP_NODELAY set. Returns the descriptor, or -1 with errno set (EAGAIN: none pending).
/// Thread-safety: any thread.
int cbench_tcp_accept(int listen_fd);

/// A blocking TCP connection to 127.0.0.1:`port`, close-on-exec, with TCP_NODELAY set; with
/// `receive_buffer` > 0, SO_RCVBUF set to it before connecting (so that the window the peer sees
/// is small from the start). Returns the descriptor, or -1 with errno set. Thread-safety: any thread.
int cbench_tcp_connect_loopback(int port, int receive_buffer);

#endif
