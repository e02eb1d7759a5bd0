#define _GNU_SOURCE
#include "cbench_bus_dbus.h"

#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOTIFICATION_PATH "/org/portrunloop/Notifications"
#define NOTIFICATION_INTERFACE "org.portrunloop.DistributedNotification"
#define NOTIFICATION_MEMBER "Posted"

struct bus {
    DBusConnection *connection;
    char *observed;           // NULL: observes nothing
    const char *answer;       // set while echoing
    long long received;       // observed notifications read so far
    long long last_seq;
};

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void append_entry(DBusMessageIter *array, const char *key, int type, const char *signature, const void *value) {
    DBusMessageIter entry, variant;
    dbus_message_iter_open_container(array, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, signature, &variant);
    dbus_message_iter_append_basic(&variant, type, value);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(array, &entry);
}

// Queues one notification (ssa{sv}b). Returns 0, or -1.
static int post(DBusConnection *connection, const char *name, long long seq) {
    DBusMessage *message = dbus_message_new_signal(NOTIFICATION_PATH, NOTIFICATION_INTERFACE, NOTIFICATION_MEMBER);
    if (!message) return -1;
    DBusMessageIter args, array;
    const char *object = "", *from = "bench-peer";
    dbus_int64_t value = seq;
    dbus_bool_t immediately = FALSE;
    dbus_message_iter_init_append(message, &args);
    dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &name);
    dbus_message_iter_append_basic(&args, DBUS_TYPE_STRING, &object);
    dbus_message_iter_open_container(&args, DBUS_TYPE_ARRAY, "{sv}", &array);
    append_entry(&array, "from", DBUS_TYPE_STRING, "s", &from);
    append_entry(&array, "seq", DBUS_TYPE_INT64, "x", &value);
    dbus_message_iter_close_container(&args, &array);
    dbus_message_iter_append_basic(&args, DBUS_TYPE_BOOLEAN, &immediately);
    dbus_bool_t queued = dbus_connection_send(connection, message, NULL);
    dbus_message_unref(message);
    return queued ? 0 : -1;
}

// Reads a notification's name and userInfo["seq"] back. Returns 0, or -1 if it is not one.
static int decode(DBusMessage *message, const char **name, long long *seq) {
    DBusMessageIter args, array;
    if (!dbus_message_iter_init(message, &args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING) return -1;
    dbus_message_iter_get_basic(&args, name);
    if (!dbus_message_iter_next(&args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_STRING) return -1;
    if (!dbus_message_iter_next(&args) || dbus_message_iter_get_arg_type(&args) != DBUS_TYPE_ARRAY) return -1;
    *seq = -1;
    dbus_message_iter_recurse(&args, &array);
    while (dbus_message_iter_get_arg_type(&array) == DBUS_TYPE_DICT_ENTRY) {
        DBusMessageIter entry, variant;
        const char *key;
        dbus_message_iter_recurse(&array, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        dbus_message_iter_next(&entry);
        dbus_message_iter_recurse(&entry, &variant);
        if (strcmp(key, "seq") == 0 && dbus_message_iter_get_arg_type(&variant) == DBUS_TYPE_INT64) {
            dbus_int64_t value;
            dbus_message_iter_get_basic(&variant, &value);
            *seq = value;
        }
        dbus_message_iter_next(&array);
    }
    return *seq >= 0 ? 0 : -1;
}

static DBusHandlerResult filter(DBusConnection *connection, DBusMessage *message, void *opaque) {
    struct bus *bus = opaque;
    if (!dbus_message_is_signal(message, NOTIFICATION_INTERFACE, NOTIFICATION_MEMBER))
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    const char *name;
    long long seq;
    if (!bus->observed || decode(message, &name, &seq) != 0 || strcmp(name, bus->observed) != 0)
        return DBUS_HANDLER_RESULT_HANDLED;
    bus->received++;
    bus->last_seq = seq;
    if (bus->answer && post(connection, bus->answer, seq) == 0) dbus_connection_flush(connection);
    return DBUS_HANDLER_RESULT_HANDLED;
}

void *cbench_bus_dbus_open(const char *address, const char *observed_name) {
    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection) { dbus_error_free(&error); return NULL; }
    struct bus *bus = calloc(1, sizeof *bus);
    if (!bus || !dbus_bus_register(connection, &error)) goto fail;
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    bus->connection = connection;
    if (observed_name) {
        bus->observed = strdup(observed_name);
        char rule[1024];
        snprintf(rule, sizeof rule, "type='signal',path='%s',interface='%s',member='%s',arg0='%s'",
                 NOTIFICATION_PATH, NOTIFICATION_INTERFACE, NOTIFICATION_MEMBER, observed_name);
        dbus_bus_add_match(connection, rule, &error);  // blocks for the daemon's answer
        if (dbus_error_is_set(&error)) goto fail;
        if (!dbus_connection_add_filter(connection, filter, bus, NULL)) goto fail;
    }
    return bus;
fail:
    dbus_error_free(&error);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    if (bus) free(bus->observed);
    free(bus);
    return NULL;
}

int cbench_bus_dbus_post_burst(void *opaque, const char *name, int count) {
    struct bus *bus = opaque;
    for (int i = 0; i < count; i++) {
        if (post(bus->connection, name, i) != 0) return -1;
        // libdbus queues without bound; write what is queued now and then, as a real sender would.
        if ((i & 63) == 63) dbus_connection_flush(bus->connection);
    }
    dbus_connection_flush(bus->connection);
    return 0;
}

int cbench_bus_dbus_receive(void *opaque, long long target, int timeout_ms) {
    struct bus *bus = opaque;
    long long deadline = now_ns() + (long long)timeout_ms * 1000000LL;
    while (bus->received < target) {
        while (bus->received < target && dbus_connection_dispatch(bus->connection) == DBUS_DISPATCH_DATA_REMAINS) {}
        if (bus->received >= target) break;
        long long left = deadline - now_ns();
        if (left <= 0) return -1;
        if (!dbus_connection_read_write(bus->connection, (int)(left / 1000000LL) + 1)) return -1;
    }
    return 0;
}

int cbench_bus_dbus_round_trips(void *opaque, const char *ping_name, int count, long long *latencies_ns) {
    struct bus *bus = opaque;
    for (int i = 0; i < count; i++) {
        long long start = now_ns();
        if (post(bus->connection, ping_name, i) != 0) return -1;
        dbus_connection_flush(bus->connection);
        if (cbench_bus_dbus_receive(bus, bus->received + 1, 5000) != 0 || bus->last_seq != i) return -1;
        if (latencies_ns) latencies_ns[i] = now_ns() - start;
    }
    return 0;
}

int cbench_bus_dbus_echo(void *opaque, const char *answer_name) {
    struct bus *bus = opaque;
    bus->answer = answer_name;
    while (dbus_connection_read_write_dispatch(bus->connection, -1)) {}
    bus->answer = NULL;
    return 0;
}

void cbench_bus_dbus_close(void *opaque) {
    struct bus *bus = opaque;
    if (bus->observed) dbus_connection_remove_filter(bus->connection, filter, bus);
    dbus_connection_close(bus->connection);
    dbus_connection_unref(bus->connection);
    free(bus->observed);
    free(bus);
}
