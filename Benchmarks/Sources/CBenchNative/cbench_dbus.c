#define _GNU_SOURCE
#include "cbench_dbus.h"

#include <dbus/dbus.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PEER_NAME "org.portrunloop.BenchPeer"
#define PEER_PATH "/org/portrunloop/Bench"
#define PEER_INTERFACE "org.portrunloop.Bench"

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static DBusConnection *open_bus(const char *address) {
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection) { dbus_error_free(&error); return NULL; }
    if (!dbus_bus_register(connection, &error)) {
        dbus_error_free(&error);
        dbus_connection_close(connection);
        dbus_connection_unref(connection);
        return NULL;
    }
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    return connection;
}

static void reply(DBusConnection *connection, DBusMessage *call, const unsigned char *bytes, int length) {
    DBusMessage *answer = dbus_message_new_method_return(call);
    if (!answer) return;
    if (bytes) dbus_message_append_args(answer, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, length, DBUS_TYPE_INVALID);
    dbus_connection_send(connection, answer, NULL);
    dbus_message_unref(answer);
}

int cbench_dbus_serve(const char *address, int ready_fd) {
    DBusConnection *connection = open_bus(address);
    if (!connection) return -1;
    DBusError error;
    dbus_error_init(&error);
    int owned = dbus_bus_request_name(connection, PEER_NAME, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) { dbus_error_free(&error); return -1; }
    if (ready_fd >= 0) (void)!write(ready_fd, "ready\n", 6);
    while (dbus_connection_read_write(connection, -1)) {
        DBusMessage *message;
        while ((message = dbus_connection_pop_message(connection)) != NULL) {
            if (dbus_message_is_method_call(message, PEER_INTERFACE, "Echo")) {
                unsigned char *bytes = NULL;
                int length = 0;
                if (dbus_message_get_args(message, NULL, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, &length, DBUS_TYPE_INVALID))
                    reply(connection, message, bytes, length);
            } else if (dbus_message_is_method_call(message, PEER_INTERFACE, "Flush")) {
                reply(connection, message, NULL, 0);
            }
            dbus_message_unref(message);
        }
    }
    return 0;
}

void *cbench_dbus_connect(const char *address) { return open_bus(address); }

static DBusMessage *call(const char *member, const unsigned char *bytes, int length) {
    DBusMessage *message = dbus_message_new_method_call(PEER_NAME, PEER_PATH, PEER_INTERFACE, member);
    if (message && bytes)
        dbus_message_append_args(message, DBUS_TYPE_ARRAY, DBUS_TYPE_BYTE, &bytes, length, DBUS_TYPE_INVALID);
    return message;
}

static int call_and_wait(DBusConnection *connection, DBusMessage *message) {
    DBusError error;
    dbus_error_init(&error);
    DBusMessage *answer = dbus_connection_send_with_reply_and_block(connection, message, 5000, &error);
    dbus_message_unref(message);
    if (!answer) { dbus_error_free(&error); return -1; }
    dbus_message_unref(answer);
    return 0;
}

int cbench_dbus_round_trips(void *opaque, int count, int size, long long *latencies_ns) {
    DBusConnection *connection = opaque;
    unsigned char *payload = malloc((size_t)(size > 0 ? size : 1));
    if (!payload) return -1;
    memset(payload, 'x', (size_t)(size > 0 ? size : 1));
    payload[0] = 'E';
    for (int i = 0; i < count; i++) {
        long long start = latencies_ns ? now_ns() : 0;
        DBusMessage *message = call("Echo", payload, size);
        if (!message || call_and_wait(connection, message) != 0) { free(payload); return -1; }
        if (latencies_ns) latencies_ns[i] = now_ns() - start;
    }
    free(payload);
    return 0;
}

int cbench_dbus_burst(void *opaque, int count, int size) {
    DBusConnection *connection = opaque;
    unsigned char *payload = malloc((size_t)(size > 0 ? size : 1));
    if (!payload) return -1;
    memset(payload, 'x', (size_t)(size > 0 ? size : 1));
    payload[0] = 'S';
    for (int i = 0; i < count; i++) {
        DBusMessage *message = call("Sink", payload, size);
        if (!message) { free(payload); return -1; }
        dbus_message_set_no_reply(message, TRUE);
        dbus_bool_t queued = dbus_connection_send(connection, message, NULL);
        dbus_message_unref(message);
        if (!queued) { free(payload); return -1; }
        // libdbus queues without bound; write what is queued now and then, as a real sender would.
        if ((i & 63) == 63) dbus_connection_flush(connection);
    }
    free(payload);
    DBusMessage *flush = call("Flush", NULL, 0);
    return flush ? call_and_wait(connection, flush) : -1;
}

void cbench_dbus_close(void *opaque) {
    DBusConnection *connection = opaque;
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
}
