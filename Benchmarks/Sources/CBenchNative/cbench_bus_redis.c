#define _GNU_SOURCE
#include "cbench_bus_redis.h"

#include <hiredis/hiredis.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define CHANNEL_PREFIX "portrunloop.notification."
#define PIPELINE 64
#define STREAM_LENGTH "100000"
#define READ_COUNT "100"
#define BLOCK_MS "1000"

struct client {
    redisContext *publisher;
    redisContext *subscriber;  // NULL: observes nothing
    char sender[64];
    long long received;
    long long last_seq;
    int bare;  // posts an object and no userInfo; counts every message received
    // Durable: XADD instead of PUBLISH; the second context reads the stream as a consumer group.
    int durable;
    char stream[512];
    char group[64];
    redisReply *batch;  // the last XREADGROUP's reply, its entries handed out one by one
    size_t next_entry;
};

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static redisContext *connect_local(int port) {
    struct timeval timeout = {5, 0};
    redisContext *context = redisConnectWithTimeout("127.0.0.1", port, timeout);
    if (!context || context->err) { if (context) redisFree(context); return NULL; }
    redisSetTimeout(context, timeout);
    return context;
}

static size_t put_u32(unsigned char *at, uint32_t value) {
    for (int i = 0; i < 4; i++) at[i] = (unsigned char)(value >> (8 * i));
    return 4;
}

static size_t put_str(unsigned char *at, const char *text) {
    size_t length = strlen(text);
    put_u32(at, (uint32_t)length);
    memcpy(at + 4, text, length);
    return 4 + length;
}

// PUBLISH, or for a durable client the XADD BusNotificationCenter(redis:) sends for a durable name.
static int append_command(struct client *client, const char *key, size_t key_length, const unsigned char *payload, size_t length) {
    int status = client->durable
        ? redisAppendCommand(client->publisher, "XADD %b MAXLEN ~ " STREAM_LENGTH " * payload %b", key, key_length, payload, length)
        : redisAppendCommand(client->publisher, "PUBLISH %b %b", key, key_length, payload, length);
    return status == REDIS_OK ? 0 : -1;
}

// Appends one PUBLISH (or XADD) of the payload BusNotificationCenter(redis:) posts (the binary form of
// Docs/RedisNotifications.md): no object, userInfo {"from": "bench-peer", "seq": seq}; bare: the
// object "bench-peer" and no userInfo.
static int append_post(struct client *client, const char *name, long long seq) {
    char channel[512];
    unsigned char payload[256];
    int c = snprintf(channel, sizeof channel, CHANNEL_PREFIX "%s", name);
    if (c <= 0 || c >= (int)sizeof channel || strlen(client->sender) > 64) return -1;
    size_t p = 0;
    payload[p++] = 0xB1;
    payload[p++] = client->bare ? 0x02 : 0x00;
    p += put_str(payload + p, client->sender);
    if (client->bare) {
        p += put_str(payload + p, "bench-peer");
        p += put_u32(payload + p, 0);
        return append_command(client, channel, (size_t)c, payload, p);
    }
    p += put_u32(payload + p, 2);
    p += put_str(payload + p, "from");
    payload[p++] = 0x01;
    p += put_str(payload + p, "bench-peer");
    p += put_str(payload + p, "seq");
    payload[p++] = 0x02;
    for (int i = 0; i < 8; i++) payload[p++] = (unsigned char)((unsigned long long)seq >> (8 * i));
    return append_command(client, channel, (size_t)c, payload, p);
}

// The seq of a payload append_post wrote (its "seq" entry), or -2.
static long long payload_seq(const char *payload, size_t length) {
    static const char key[] = {3, 0, 0, 0, 's', 'e', 'q', 0x02};
    const char *found = memmem(payload, length, key, sizeof key);
    if (!found || (size_t)(found - payload) + sizeof key + 8 > length) return -2;
    unsigned long long value = 0;
    for (int i = 7; i >= 0; i--) value = (value << 8) | (unsigned char)found[sizeof key + i];
    return (long long)value;
}

static int read_replies(redisContext *context, int count) {
    for (int i = 0; i < count; i++) {
        void *reply = NULL;
        if (redisGetReply(context, &reply) != REDIS_OK || !reply) return -1;
        freeReplyObject(reply);
    }
    return 0;
}

// The next entry of the stream (durable): entries of the last read one by one; once they are
// handed out, their XACK and the next XREADGROUP are written together. Its seq, or -1 on an error
// or (unless `patient`) a read that timed out.
static long long next_entry(struct client *client, int patient) {
    for (;;) {
        redisReply *entries = client->batch ? client->batch->element[0]->element[1] : NULL;
        if (entries && client->next_entry < entries->elements) {
            redisReply *entry = entries->element[client->next_entry++];
            redisReply *fields = entry->element[1];
            long long seq = -2;
            if (fields->type == REDIS_REPLY_ARRAY && fields->elements >= 2)
                seq = client->bare ? client->received : payload_seq(fields->element[1]->str, fields->element[1]->len);
            if (seq < 0) continue;
            client->received++;
            client->last_seq = seq;
            return seq;
        }
        int acks = 0;
        if (entries && entries->elements > 0) {
            size_t count = 3 + entries->elements;
            const char **argv = malloc(count * sizeof *argv);
            size_t *lengths = malloc(count * sizeof *lengths);
            if (!argv || !lengths) { free(argv); free(lengths); return -1; }
            argv[0] = "XACK"; argv[1] = client->stream; argv[2] = client->group;
            for (size_t i = 0; i < entries->elements; i++) argv[3 + i] = entries->element[i]->element[0]->str;
            for (size_t i = 0; i < count; i++) lengths[i] = strlen(argv[i]);
            int status = redisAppendCommandArgv(client->subscriber, (int)count, argv, lengths);
            free(argv);
            free(lengths);
            if (status != REDIS_OK) return -1;
            acks = 1;
        }
        if (client->batch) freeReplyObject(client->batch);
        client->batch = NULL;
        client->next_entry = 0;
        if (redisAppendCommand(client->subscriber, "XREADGROUP GROUP %s c COUNT " READ_COUNT " BLOCK " BLOCK_MS " STREAMS %s >",
                               client->group, client->stream) != REDIS_OK) return -1;
        if (acks && read_replies(client->subscriber, 1) != 0) return -1;
        redisReply *reply = NULL;
        if (redisGetReply(client->subscriber, (void **)&reply) != REDIS_OK || !reply) return -1;
        if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 1) {
            client->batch = reply;
        } else {
            int timed_out = reply->type == REDIS_REPLY_NIL;
            freeReplyObject(reply);
            if (!timed_out || !patient) return -1;
        }
    }
}

// Reads the next message of the subscription; its seq (userInfo "seq"), or -1 on an error.
static long long next_message(struct client *client) {
    if (client->durable) return next_entry(client, 0);
    for (;;) {
        redisReply *reply = NULL;
        if (redisGetReply(client->subscriber, (void **)&reply) != REDIS_OK || !reply) return -1;
        long long seq = -2;
        if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 3 && reply->element[0]->type == REDIS_REPLY_STRING
            && strcmp(reply->element[0]->str, "message") == 0 && reply->element[2]->type == REDIS_REPLY_STRING) {
            seq = client->bare ? client->received : payload_seq(reply->element[2]->str, reply->element[2]->len);
        }
        freeReplyObject(reply);
        if (seq >= 0) {
            client->received++;
            client->last_seq = seq;
            return seq;
        }
    }
}

void *cbench_bus_redis_open(int port, const char *observed_name, int bare, int durable) {
    struct client *client = calloc(1, sizeof *client);
    if (!client) return NULL;
    client->bare = bare;
    client->durable = durable;
    snprintf(client->sender, sizeof client->sender, "bench-raw:%d:%08x", (int)getpid(), (unsigned)now_ns());
    client->publisher = connect_local(port);
    if (!client->publisher) goto fail;
    if (observed_name) {
        client->subscriber = connect_local(port);
        if (!client->subscriber) goto fail;
        if (durable) {
            snprintf(client->stream, sizeof client->stream, CHANNEL_PREFIX "%s", observed_name);
            snprintf(client->group, sizeof client->group, "bench-raw-%d", (int)getpid());
            redisReply *reply = redisCommand(client->subscriber, "XGROUP CREATE %s %s $ MKSTREAM", client->stream, client->group);
            int created = reply && (reply->type == REDIS_REPLY_STATUS
                                    || (reply->type == REDIS_REPLY_ERROR && strncmp(reply->str, "BUSYGROUP", 9) == 0));
            if (reply) freeReplyObject(reply);
            if (!created) goto fail;
            return client;
        }
        redisReply *reply = redisCommand(client->subscriber, "SUBSCRIBE " CHANNEL_PREFIX "%s", observed_name);
        int confirmed = reply && reply->type == REDIS_REPLY_ARRAY && reply->elements == 3;
        if (reply) freeReplyObject(reply);
        if (!confirmed) goto fail;
    }
    return client;
fail:
    cbench_bus_redis_close(client);
    return NULL;
}

int cbench_bus_redis_post_burst(void *opaque, const char *name, int count) {
    struct client *client = opaque;
    int pending = 0;
    for (int i = 0; i < count; i++) {
        if (append_post(client, name, i) != 0) return -1;
        if (++pending == PIPELINE) {
            if (read_replies(client->publisher, pending) != 0) return -1;
            pending = 0;
        }
    }
    return read_replies(client->publisher, pending);
}

int cbench_bus_redis_receive(void *opaque, long long target) {
    struct client *client = opaque;
    while (client->received < target) {
        if (next_message(client) < 0) return -1;
    }
    return 0;
}

int cbench_bus_redis_round_trips(void *opaque, const char *ping_name, int count, long long *latencies_ns) {
    struct client *client = opaque;
    for (int i = 0; i < count; i++) {
        long long start = now_ns();
        if (append_post(client, ping_name, i) != 0 || read_replies(client->publisher, 1) != 0) return -1;
        if (next_message(client) != i) return -1;
        if (latencies_ns) latencies_ns[i] = now_ns() - start;
    }
    return 0;
}

int cbench_bus_redis_echo(void *opaque, const char *answer_name) {
    struct client *client = opaque;
    struct timeval forever = {0, 0};
    redisSetTimeout(client->subscriber, forever);
    for (;;) {
        long long seq = client->durable ? next_entry(client, 1) : next_message(client);
        if (seq < 0) return 0;
        if (append_post(client, answer_name, seq) != 0 || read_replies(client->publisher, 1) != 0) return 0;
    }
}

void cbench_bus_redis_close(void *opaque) {
    struct client *client = opaque;
    if (client->publisher) redisFree(client->publisher);
    if (client->subscriber) redisFree(client->subscriber);
    if (client->batch) freeReplyObject(client->batch);
    free(client);
}
