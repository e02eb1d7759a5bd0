#include "cbench_bufferevent_echo.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct cbench_bufferevent_echo {
    struct event_base *base;
    struct evconnlistener *listener;
    struct event *stop_event;
    int stop_fd;
    int port;
    clockid_t clock;
    _Atomic long accepted;
    pthread_t thread;
    pthread_mutex_t started_lock;
    pthread_cond_t started;
    int is_started;
};

static void on_read(struct bufferevent *connection, void *context) {
    (void)context;
    evbuffer_add_buffer(bufferevent_get_output(connection), bufferevent_get_input(connection));
}

static void on_event(struct bufferevent *connection, short what, void *context) {
    (void)context;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) bufferevent_free(connection);
}

static void on_accept(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *address, int length,
                      void *context) {
    (void)listener; (void)address; (void)length;
    cbench_bufferevent_echo *server = context;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); // as every other peer
    struct bufferevent *connection = bufferevent_socket_new(server->base, fd, BEV_OPT_CLOSE_ON_FREE);
    if (!connection) { close(fd); return; }
    bufferevent_setcb(connection, on_read, NULL, on_event, server);
    bufferevent_enable(connection, EV_READ | EV_WRITE);
    atomic_fetch_add_explicit(&server->accepted, 1, memory_order_relaxed);
}

static void on_stop(evutil_socket_t fd, short what, void *context) {
    (void)fd; (void)what;
    event_base_loopbreak(((cbench_bufferevent_echo *)context)->base);
}

static void *run(void *context) {
    cbench_bufferevent_echo *server = context;
    pthread_getcpuclockid(pthread_self(), &server->clock);
    pthread_mutex_lock(&server->started_lock);
    server->is_started = 1;
    pthread_cond_signal(&server->started);
    pthread_mutex_unlock(&server->started_lock);
    event_base_dispatch(server->base);
    return NULL;
}

cbench_bufferevent_echo *cbench_bufferevent_echo_start(int backlog) {
    cbench_bufferevent_echo *server = calloc(1, sizeof *server);
    if (!server) return NULL;
    server->stop_fd = -1;
    server->clock = (clockid_t)-1;
    struct event_config *config = event_config_new();
    if (!config) goto fail;
    event_config_set_flag(config, EVENT_BASE_FLAG_NOLOCK);
    server->base = event_base_new_with_config(config);
    event_config_free(config);
    if (!server->base) goto fail;
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    server->listener = evconnlistener_new_bind(server->base, on_accept, server,
                                               LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, backlog,
                                               (struct sockaddr *)&address, sizeof address);
    if (!server->listener) goto fail;
    socklen_t length = sizeof address;
    if (getsockname(evconnlistener_get_fd(server->listener), (struct sockaddr *)&address, &length) != 0) goto fail;
    server->port = ntohs(address.sin_port);
    server->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (server->stop_fd < 0) goto fail;
    server->stop_event = event_new(server->base, server->stop_fd, EV_READ, on_stop, server);
    if (!server->stop_event || event_add(server->stop_event, NULL) != 0) goto fail;
    pthread_mutex_init(&server->started_lock, NULL);
    pthread_cond_init(&server->started, NULL);
    if (pthread_create(&server->thread, NULL, run, server) != 0) goto fail;
    pthread_mutex_lock(&server->started_lock);
    while (!server->is_started) pthread_cond_wait(&server->started, &server->started_lock);
    pthread_mutex_unlock(&server->started_lock);
    return server;
fail:
    if (server->stop_event) event_free(server->stop_event);
    if (server->stop_fd >= 0) close(server->stop_fd);
    if (server->listener) evconnlistener_free(server->listener);
    if (server->base) event_base_free(server->base);
    free(server);
    return NULL;
}

int cbench_bufferevent_echo_port(const cbench_bufferevent_echo *server) { return server->port; }

int cbench_bufferevent_echo_cpu_clock(const cbench_bufferevent_echo *server) { return (int)server->clock; }

long cbench_bufferevent_echo_accepted(const cbench_bufferevent_echo *server) {
    return atomic_load_explicit(&((cbench_bufferevent_echo *)server)->accepted, memory_order_relaxed);
}

void cbench_bufferevent_echo_stop(cbench_bufferevent_echo *server) {
    unsigned long long one = 1;
    if (write(server->stop_fd, &one, sizeof one) != sizeof one) abort();
    pthread_join(server->thread, NULL);
    // Connections still open (clients close theirs first) are freed with the base's events.
    event_free(server->stop_event);
    close(server->stop_fd);
    evconnlistener_free(server->listener);
    event_base_free(server->base);
    pthread_mutex_destroy(&server->started_lock);
    pthread_cond_destroy(&server->started);
    free(server);
}
