// The Linux system calls Swift's Glibc module does not export: epoll(7) and eventfd(2).
// PortRunLoopKit's Support/System.swift is their only user: it asks the kernel whether it can
// watch an fd (on whatever thread `watch` is called, before the loop's libevent base registers it
// on the loop's own thread), and makes each loop's doorbell eventfd.
#ifndef PORTRUNLOOP_CLINUX_SHIM_H
#define PORTRUNLOOP_CLINUX_SHIM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>

#endif
