// libdbus-1 for the benchmarks' D-Bus floor (a method call between two processes through a
// dbus-daemon the benchmark starts). Only the library's own header here.
#ifndef PORTRUNLOOP_CBENCHDBUS_SHIM_H
#define PORTRUNLOOP_CBENCHDBUS_SHIM_H

#include <dbus/dbus.h>

#endif
