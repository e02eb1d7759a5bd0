// C declarations the benchmarks need and Swift's Glibc module does not give them.
//
// Declared by hand, deliberately WITHOUT including system headers: a C module that pulls in
// <sys/eventfd.h>, <sys/resource.h> or friends makes clang build a second copy of glibc's types
// (fd_set, timeval, ...) that then clashes with SwiftGlibc's in every file that imports both.
// Prototypes and constants below are glibc's (x86_64 and aarch64 Linux).
#ifndef PORTRUNLOOP_CBENCHSUPPORT_H
#define PORTRUNLOOP_CBENCHSUPPORT_H

// eventfd(2), from <sys/eventfd.h>.
int eventfd(unsigned int initval, int flags);
#define CBENCH_EFD_CLOEXEC 02000000

// The CoreFoundation run-loop calls the Foundation RunLoop peer needs. swift-corelibs-foundation
// links CoreFoundation into libFoundation.so and exports these symbols, but does not re-export the
// CoreFoundation module to Swift. CFRunLoopRef is an opaque pointer, so `void *` is ABI-identical.
void *CFRunLoopGetCurrent(void);
void CFRunLoopWakeUp(void *runLoop);
void CFRunLoopStop(void *runLoop);

// sched_getcpu(3), from <sched.h> (a GNU extension the Glibc module does not expose): the CPU the
// calling thread runs on.
int sched_getcpu(void);

// Keeps SwiftPM happy about a C target with only a header (and gives the benchmarks a compiler
// barrier that costs one call).
void cbench_touch(void *pointer);

#endif
