// The Linux system calls Swift's Glibc module does not export, or exports awkwardly: epoll(7),
// eventfd(2) and timerfd(2) for the loop, a thread's kernel name, and the Unix-domain socket calls of cross-process ports (SOCK_SEQPACKET,
// SO_PEERCRED, sockaddr_un, MSG_NOSIGNAL/MSG_TRUNC, recvmmsg); and the thread-locals of the hand-off paths.
// PortRunLoopKit's Support/System*.swift and Support/ThreadLocals.swift files are their only users.
#ifndef PORTRUNLOOP_CLINUX_SHIM_H
#define PORTRUNLOOP_CLINUX_SHIM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <errno.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/prctl.h>

/// `prctl(PR_SET_NAME)`: the calling thread's kernel name (`prctl` is variadic, which Swift
/// cannot call; `pthread_setname_np` is declared only under `_GNU_SOURCE`). The kernel keeps the
/// first 15 bytes. 0, or -1 with errno set.
static inline int portrunloop_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/// The most bytes of a socket path, without the terminating NUL (`sizeof(sun_path) - 1`).
static inline int portrunloop_max_socket_path(void) {
    struct sockaddr_un address;
    return (int)sizeof(address.sun_path) - 1;
}

/// `socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)`.
static inline int portrunloop_seqpacket_socket(void) {
    return socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

static inline int portrunloop_fill_address(struct sockaddr_un *address, const char *path) {
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof(address->sun_path)) { errno = ENAMETOOLONG; return -1; }
    memset(address, 0, sizeof *address);
    address->sun_family = AF_UNIX;
    memcpy(address->sun_path, path, length);
    return 0;
}

/// `bind(fd, path)` then `listen(fd, backlog)`.
static inline int portrunloop_bind_listen(int fd, const char *path, int backlog) {
    struct sockaddr_un address;
    if (portrunloop_fill_address(&address, path) != 0) return -1;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) return -1;
    return listen(fd, backlog);
}

/// `connect(fd, path)`; on a non-blocking socket EAGAIN means the listener's backlog is full.
static inline int portrunloop_connect(int fd, const char *path) {
    struct sockaddr_un address;
    if (portrunloop_fill_address(&address, path) != 0) return -1;
    return connect(fd, (struct sockaddr *)&address, sizeof address);
}

/// `accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)`.
static inline int portrunloop_accept(int fd) {
    return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/// `getsockopt(SO_PEERCRED)`: the pid, uid and gid of the process at the other end of a connected
/// Unix socket, as the kernel recorded them at connect/listen time. (The layout of `struct ucred`,
/// which glibc declares only under _GNU_SOURCE.)
static inline int portrunloop_peer_credentials(int fd, int *pid, unsigned *uid, unsigned *gid) {
    struct { int pid; unsigned uid; unsigned gid; } credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *pid = credentials.pid; *uid = credentials.uid; *gid = credentials.gid;
    return 0;
}

/// `send(fd, bytes, length, MSG_NOSIGNAL | MSG_DONTWAIT)`: never raises SIGPIPE, never blocks.
static inline long portrunloop_send_frame(int fd, const void *bytes, unsigned long length) {
    return (long)send(fd, bytes, length, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/// `recv(fd, buffer, capacity, MSG_DONTWAIT | MSG_TRUNC)`: one whole frame; the result is the
/// frame's real length even when it did not fit (then only `capacity` bytes were copied).
static inline long portrunloop_receive_frame(int fd, void *buffer, unsigned long capacity) {
    return (long)recv(fd, buffer, capacity, MSG_DONTWAIT | MSG_TRUNC);
}

/// The most file descriptors one frame may carry (the kernel's `SCM_MAX_FD`).
#define PORTRUNLOOP_MAX_FDS_PER_FRAME 253

/// The control-buffer bytes `count` descriptors need (`CMSG_SPACE(count * sizeof(int))`).
static inline unsigned long portrunloop_fds_control_size(unsigned int count) {
    return (unsigned long)CMSG_SPACE(count * sizeof(int));
}

/// `sendmsg(fd, bytes, SCM_RIGHTS fds, MSG_NOSIGNAL | MSG_DONTWAIT)`: one frame carrying `count`
/// (1 to 253) descriptors; the kernel duplicates them into the receiver.
static inline long portrunloop_send_frame_with_fds(int fd, const void *bytes, unsigned long length,
                                                    const int *fds, unsigned int count) {
    if (count == 0 || count > PORTRUNLOOP_MAX_FDS_PER_FRAME) { errno = EINVAL; return -1; }
    union { struct cmsghdr align; char bytes[CMSG_SPACE(PORTRUNLOOP_MAX_FDS_PER_FRAME * sizeof(int))]; } control;
    struct iovec vector = { .iov_base = (void *)bytes, .iov_len = length };
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = CMSG_SPACE(count * sizeof(int));
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(count * sizeof(int));
    memcpy(CMSG_DATA(header), fds, count * sizeof(int));
    return (long)sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/// After a receive: moves the `SCM_RIGHTS` descriptors of `message` to the start of its control
/// buffer (as ints) and returns how many; any other control message is ignored. When the kernel
/// truncated the control data (`MSG_CTRUNC`: descriptors were lost), closes the ones that came and
/// returns -1.
static inline int portrunloop_collect_fds(struct msghdr *message) {
    int collected[PORTRUNLOOP_MAX_FDS_PER_FRAME];
    int count = 0, overflow = 0;
    if (message->msg_controllen == 0) return (message->msg_flags & MSG_CTRUNC) ? -1 : 0;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(message); header; header = CMSG_NXTHDR(message, header)) {
        if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
        int n = (int)((header->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < n; i++) {
            int received;
            memcpy(&received, CMSG_DATA(header) + i * sizeof(int), sizeof(int));
            if (count < PORTRUNLOOP_MAX_FDS_PER_FRAME) collected[count++] = received; else { close(received); overflow = 1; }
        }
    }
    if (overflow || (message->msg_flags & MSG_CTRUNC)) {
        for (int i = 0; i < count; i++) close(collected[i]);
        return -1;
    }
    memcpy(message->msg_control, collected, (unsigned long)count * sizeof(int));
    return count;
}

/// `recvmsg(fd, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC)` of one whole frame into `buffer`,
/// with `controlSize` bytes of `control` for descriptors: the result is the frame's real length
/// (as ``portrunloop_receive_frame``); `*fdCount` the descriptors received, now the first ints of
/// `control` (-1: the control data was truncated, all closed).
static inline long portrunloop_receive_frame_with_fds(int fd, void *buffer, unsigned long capacity,
                                                      void *control, unsigned long controlSize, int *fdCount) {
    struct iovec vector = { .iov_base = buffer, .iov_len = capacity };
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = controlSize;
    long received = (long)recvmsg(fd, &message, MSG_DONTWAIT | MSG_TRUNC | 0x40000000 /* MSG_CMSG_CLOEXEC */);
    *fdCount = received >= 0 ? portrunloop_collect_fds(&message) : 0;
    return received;
}

/// The most frames ``portrunloop_receive_frames`` reads in one call.
#define PORTRUNLOOP_MAX_FRAMES_PER_CALL 64

/// The kernel's `struct mmsghdr`, declared here: glibc declares it (and `recvmmsg`) only under
/// `_GNU_SOURCE`, which this module cannot define without its `<sys/socket.h>` disagreeing with the
/// other C modules' (Clang modules must agree on every system header).
struct portrunloop_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

/// `recvmmsg(fd, …, MSG_DONTWAIT | MSG_TRUNC)` (through `syscall`, see above): up to `count` (at
/// most 64) whole frames in one call, frame i into the `slotSize` bytes at `buffer + i * slotSize`,
/// its descriptors (`SCM_RIGHTS`, close-on-exec) into the `controlSize` bytes at
/// `control + i * controlSize`, collected there as ints, their count in `fdCounts[i]` (-1: the
/// control data was truncated and the descriptors that came were closed).
/// `lengths[i]` is frame i's real length: more than `slotSize` when it did not fit (only `slotSize`
/// bytes were copied), 0 at end of file. Returns how many frames were read (at least 1), or -1 with
/// errno.
static inline int portrunloop_receive_frames(int fd, void *buffer, unsigned long slotSize, unsigned int count,
                                             long *lengths, void *control, unsigned long controlSize, int *fdCounts) {
    struct portrunloop_mmsghdr messages[PORTRUNLOOP_MAX_FRAMES_PER_CALL];
    struct iovec vectors[PORTRUNLOOP_MAX_FRAMES_PER_CALL];
    if (count > PORTRUNLOOP_MAX_FRAMES_PER_CALL) count = PORTRUNLOOP_MAX_FRAMES_PER_CALL;
    memset(messages, 0, sizeof(messages[0]) * count);
    for (unsigned int i = 0; i < count; i++) {
        vectors[i].iov_base = (char *)buffer + (unsigned long)i * slotSize;
        vectors[i].iov_len = slotSize;
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
        messages[i].msg_hdr.msg_control = (char *)control + (unsigned long)i * controlSize;
        messages[i].msg_hdr.msg_controllen = controlSize;
    }
    long received = syscall(SYS_recvmmsg, fd, messages, count,
                            MSG_DONTWAIT | MSG_TRUNC | 0x40000000 /* MSG_CMSG_CLOEXEC */, (void *)0);
    for (long i = 0; i < received; i++) {
        lengths[i] = (long)messages[i].msg_len;
        fdCounts[i] = portrunloop_collect_fds(&messages[i].msg_hdr);
    }
    return (int)received;
}

/// `poll` on one fd; `events`: 1 readable, 2 writable. Returns the ready set (4: hang-up or error),
/// 0 on timeout, -1 on error.
static inline int portrunloop_poll(int fd, int events, int timeoutMilliseconds) {
    struct pollfd entry = { .fd = fd, .events = 0, .revents = 0 };
    if (events & 1) entry.events |= POLLIN;
    if (events & 2) entry.events |= POLLOUT;
    int rc = poll(&entry, 1, timeoutMilliseconds);
    if (rc <= 0) return rc;
    int ready = 0;
    if (entry.revents & POLLIN) ready |= 1;
    if (entry.revents & POLLOUT) ready |= 2;
    if (entry.revents & (POLLHUP | POLLERR | POLLNVAL)) ready |= 4;
    return ready;
}

/// `poll` on `fd` for `events` (as above) and on `wakeFd` for readability; bit 8 of the result:
/// `wakeFd` was readable. 0 on timeout, -1 on error.
static inline int portrunloop_poll_or_wake(int fd, int events, int wakeFd, int timeoutMilliseconds) {
    struct pollfd entries[2] = {
        { .fd = fd, .events = 0, .revents = 0 },
        { .fd = wakeFd, .events = POLLIN, .revents = 0 },
    };
    if (events & 1) entries[0].events |= POLLIN;
    if (events & 2) entries[0].events |= POLLOUT;
    int rc = poll(entries, 2, timeoutMilliseconds);
    if (rc <= 0) return rc;
    int ready = 0;
    if (entries[0].revents & POLLIN) ready |= 1;
    if (entries[0].revents & POLLOUT) ready |= 2;
    if (entries[0].revents & (POLLHUP | POLLERR | POLLNVAL)) ready |= 4;
    if (entries[1].revents) ready |= 8;
    return ready;
}

/// `flock(fd, LOCK_EX | LOCK_NB)`.
static inline int portrunloop_lock_exclusive(int fd) { return flock(fd, LOCK_EX | LOCK_NB); }

/// `lstat(path)`: its owner, its mode bits (type and permissions). -1 with errno on failure.
static inline int portrunloop_lstat(const char *path, unsigned *owner, unsigned *mode) {
    struct stat info;
    if (lstat(path, &info) != 0) return -1;
    *owner = info.st_uid; *mode = info.st_mode;
    return 0;
}

/// `S_ISDIR` / `S_ISSOCK` of a mode from `portrunloop_lstat`.
static inline int portrunloop_is_directory(unsigned mode) { return S_ISDIR(mode); }
static inline int portrunloop_is_socket(unsigned mode) { return S_ISSOCK(mode); }

// MARK: Thread-locals of the hand-off paths

// What the library keeps per thread and reads on every hand-off: the thread's loop, whether it is
// the main thread, and the loop whose executor job it is running. A C `_Thread_local` is read with
// one `%fs`-relative load. A `pthread_key_t` in Swift costs a call into libc per read and a
// `swift_once` for the lazily made key, two more pages of code that a hand-off after an idle spell
// finds cold. The variables are defined here, weak, so that every object file using one shares one
// definition. Only Support/ThreadLocals.swift calls these.

__attribute__((weak)) _Thread_local void *portrunloop_tls_loop = 0;
__attribute__((weak)) _Thread_local unsigned char portrunloop_tls_main_marker = 0;
__attribute__((weak)) _Thread_local void *portrunloop_tls_running_job = 0;
__attribute__((weak)) _Thread_local void *portrunloop_tls_main_loop = 0;

/// The calling thread's loop (unretained), or NULL.
static inline void *portrunloop_thread_loop(void) { return portrunloop_tls_loop; }
static inline void portrunloop_set_thread_loop(void *loop) { portrunloop_tls_loop = loop; }

/// 0: not known yet; 1: the main thread; 2: another thread.
static inline unsigned char portrunloop_main_marker(void) { return portrunloop_tls_main_marker; }
static inline void portrunloop_set_main_marker(unsigned char marker) { portrunloop_tls_main_marker = marker; }

/// The loop whose executor job the calling thread is running (unretained), or NULL.
static inline void *portrunloop_running_job(void) { return portrunloop_tls_running_job; }
static inline void portrunloop_set_running_job(void *loop) { portrunloop_tls_running_job = loop; }

/// The main loop (unretained; it lives as long as the process), on the main thread once it asked
/// for it; NULL on every other thread.
static inline void *portrunloop_main_loop(void) { return portrunloop_tls_main_loop; }
static inline void portrunloop_set_main_loop(void *loop) { portrunloop_tls_main_loop = loop; }

#endif
