// libdbus-1, the reference D-Bus client library, for PortRunLoopDBus. Its main-loop integration
// (DBusWatch for the connection's socket, DBusTimeout for its timers) maps one to one onto a
// PortRunLoop's fd sources and RunLoopTimers, so the bus connection runs on the loop's own thread.
#ifndef PORTRUNLOOP_CDBUS_SHIM_H
#define PORTRUNLOOP_CDBUS_SHIM_H

#include <dbus/dbus.h>

#endif
