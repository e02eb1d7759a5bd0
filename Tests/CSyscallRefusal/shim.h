// Per-thread seccomp filters that make one system call fail with a chosen errno: the tests reach
// through them the library's answers to failures the kernel does not otherwise produce on demand
// (a peer's credentials that cannot be read, an fd that epoll will not watch). A filter installed
// with prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) and no SECCOMP_FILTER_FLAG_TSYNC binds the calling
// thread, and the threads it creates afterwards, for the rest of their lives; every other thread
// of the process is untouched. Only <linux/...> and a few libc headers that declare no type the
// library's CLinux module declares are included.
#ifndef PORTRUNLOOP_CSYSCALLREFUSAL_SHIM_H
#define PORTRUNLOOP_CSYSCALLREFUSAL_SHIM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <asm/unistd.h>
#include <asm/socket.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define SYSCALL_REFUSAL_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SYSCALL_REFUSAL_ARCH AUDIT_ARCH_AARCH64
#else
#error "CSyscallRefusal: no audit architecture for this target"
#endif

/// `SOL_SOCKET` (<sys/socket.h>'s value, fixed by the kernel ABI).
#define SYSCALL_REFUSAL_SOL_SOCKET 1
/// `EPOLL_CTL_ADD` (<sys/epoll.h>'s value, fixed by the kernel ABI; that header is CLinux's).
#define SYSCALL_REFUSAL_EPOLL_CTL_ADD 1
/// `EPOLL_CTL_MOD` (<sys/epoll.h>'s value, fixed by the kernel ABI).
#define SYSCALL_REFUSAL_EPOLL_CTL_MOD 3

/// An argument index that ``syscall_refusal_install`` does not test.
#define SYSCALL_REFUSAL_ANY_ARGUMENT 0xffffffffu

/// Installs on the calling thread a filter under which system call `number` fails with `error`
/// when the low 32 bits of its arguments `first` and `second` (0-based, or
/// `SYSCALL_REFUSAL_ANY_ARGUMENT`: not tested) equal `firstValue` and `secondValue`; every other
/// call runs. 0, or -1 with errno set. `PR_SET_NO_NEW_PRIVS` (also per thread) lets a process
/// without CAP_SYS_ADMIN install a filter.
static inline int syscall_refusal_install(uint32_t number, uint32_t first, uint32_t firstValue,
                                          uint32_t second, uint32_t secondValue, int error) {
    // Arguments are 64-bit slots; on a little-endian machine their low halves come first.
    uint32_t arguments = (uint32_t)offsetof(struct seccomp_data, args);
    struct sock_filter next = BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0);
    struct sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYSCALL_REFUSAL_ARCH, 0, 6),    // another ABI: allow
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, number, 0, 4),                   // another call: allow
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arguments + 8 * first),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, firstValue, 0, 2),               // no match: allow
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arguments + 8 * second),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, secondValue, 1, 0),              // match: refuse
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((uint32_t)error & SECCOMP_RET_DATA)),
    };
    if (first == SYSCALL_REFUSAL_ANY_ARGUMENT) { program[4] = next; program[5] = next; }
    if (second == SYSCALL_REFUSAL_ANY_ARGUMENT) {
        program[6] = next;
        program[7] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0); // straight to refuse
    }
    struct sock_fprog filter = { .len = (unsigned short)(sizeof program / sizeof program[0]), .filter = program };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter);
}

/// From now on, on the calling thread, `getsockopt(fd, SOL_SOCKET, SO_PEERCRED, ...)` fails with
/// `error`; every other call (another option included) runs. 0, or -1 with errno set.
static inline int syscall_refusal_peer_credentials(int error) {
    return syscall_refusal_install(__NR_getsockopt, 1, SYSCALL_REFUSAL_SOL_SOCKET, 2, SO_PEERCRED, error);
}

/// From now on, on the calling thread, `epoll_ctl(epoll, EPOLL_CTL_ADD, ...)` fails with `error`
/// for this one epoll instance; other instances and operations run. 0, or -1 with errno set.
static inline int syscall_refusal_epoll_add(int epoll, int error) {
    return syscall_refusal_install(__NR_epoll_ctl, 0, (uint32_t)epoll, 1, SYSCALL_REFUSAL_EPOLL_CTL_ADD, error);
}

/// From now on, on the calling thread, `epoll_ctl(_, EPOLL_CTL_ADD, ...)` fails with `error` for
/// every epoll instance (a loop's own included: install it once the loop has added its own
/// events). 0, or -1 with errno set.
static inline int syscall_refusal_any_epoll_add(int error) {
    return syscall_refusal_install(__NR_epoll_ctl, 1, SYSCALL_REFUSAL_EPOLL_CTL_ADD, 1, SYSCALL_REFUSAL_EPOLL_CTL_ADD, error);
}

/// From now on, on the calling thread, `epoll_ctl(_, EPOLL_CTL_ADD, fd, _)` fails with `error`
/// for this one fd, in every epoll instance (a loop's own and the library's probe); other fds and
/// operations run. 0, or -1 with errno set.
static inline int syscall_refusal_epoll_add_of(int fd, int error) {
    return syscall_refusal_install(__NR_epoll_ctl, 1, SYSCALL_REFUSAL_EPOLL_CTL_ADD, 2, (uint32_t)fd, error);
}

/// From now on, on the calling thread, `epoll_ctl(_, EPOLL_CTL_MOD, fd, _)` fails with `error`
/// for this one fd, in every epoll instance.
static inline int syscall_refusal_epoll_modify_of(int fd, int error) {
    return syscall_refusal_install(__NR_epoll_ctl, 1, SYSCALL_REFUSAL_EPOLL_CTL_MOD, 2, (uint32_t)fd, error);
}

/// From now on, on the calling thread, `accept4` and `accept` on the listening socket `fd` fail
/// with `error` (two filters); other fds run. 0, or -1 with errno set.
static inline int syscall_refusal_accept(int fd, int error) {
    if (syscall_refusal_install(__NR_accept4, 0, (uint32_t)fd, 0, (uint32_t)fd, error) != 0) return -1;
    return syscall_refusal_install(__NR_accept, 0, (uint32_t)fd, 0, (uint32_t)fd, error);
}

/// From now on, on the calling thread, every receive on the socket `fd` fails with `error`:
/// `recv`/`recvfrom` (`recv` is the `recvfrom` system call), `recvmsg` and `recvmmsg` (three
/// filters); other fds run. 0, or -1 with errno set.
static inline int syscall_refusal_receive(int fd, int error) {
    if (syscall_refusal_install(__NR_recvfrom, 0, (uint32_t)fd, 0, (uint32_t)fd, error) != 0) return -1;
    if (syscall_refusal_install(__NR_recvmsg, 0, (uint32_t)fd, 0, (uint32_t)fd, error) != 0) return -1;
    return syscall_refusal_install(__NR_recvmmsg, 0, (uint32_t)fd, 0, (uint32_t)fd, error);
}

/// From now on, on the calling thread, `send`/`sendto` of exactly `length` bytes fails with
/// `error` (`send` is the `sendto` system call); other lengths, and `sendmsg`, run.
static inline int syscall_refusal_send_of_length(unsigned int length, int error) {
    return syscall_refusal_install(__NR_sendto, 2, length, 2, length, error);
}

/// From now on, on the calling thread, every `poll` fails with `error` (`poll(2)` where the kernel
/// has it, `ppoll(2)`, which glibc's `poll` calls, where it has not: aarch64).
static inline int syscall_refusal_poll(int error) {
#ifdef __NR_poll
    uint32_t number = __NR_poll;
#else
    uint32_t number = __NR_ppoll;
#endif
    return syscall_refusal_install(number, SYSCALL_REFUSAL_ANY_ARGUMENT, 0, SYSCALL_REFUSAL_ANY_ARGUMENT, 0, error);
}

/// From now on, on the calling thread, `clone3` fails with `error`: `pthread_create` (which
/// glibc makes with `clone3`, falling back to `clone` only when the kernel lacks it) returns it.
static inline int syscall_refusal_thread_creation(int error) {
    return syscall_refusal_install(__NR_clone3, SYSCALL_REFUSAL_ANY_ARGUMENT, 0, SYSCALL_REFUSAL_ANY_ARGUMENT, 0, error);
}

/// From now on, on the calling thread (and the threads it starts), `timerfd_create` fails with
/// `error`.
static inline int syscall_refusal_timerfd_create(int error) {
    return syscall_refusal_install(__NR_timerfd_create, SYSCALL_REFUSAL_ANY_ARGUMENT, 0, SYSCALL_REFUSAL_ANY_ARGUMENT, 0, error);
}

/// From now on, on the calling thread, every `pread` fails with `error`.
static inline int syscall_refusal_pread(int error) {
    return syscall_refusal_install(__NR_pread64, SYSCALL_REFUSAL_ANY_ARGUMENT, 0, SYSCALL_REFUSAL_ANY_ARGUMENT, 0, error);
}

#endif
