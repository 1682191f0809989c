/* POLLRDHUP. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CMetricsHTTP.h"
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

struct ifm_http_server {
    struct MHD_Daemon *daemon;
    ifm_http_handler handler;
    ifm_http_peer_event peer_event;
    void *context;
    /* Deferred answers not yet completed, so a stop can resume their connections first. */
    ifm_http_pending *pending;
};

/* A deferred answer. Owned jointly by the connection (through its request state) and the
 * caller, until both are done with it: whichever finishes second frees it. */
struct ifm_http_pending {
    ifm_http_server *server;
    struct MHD_Connection *connection;
    struct MHD_Response *response;
    unsigned int status;
    /* The caller completed it. */
    int completed;
    /* The connection ended, or the server stopped: nothing may be resumed. */
    int gone;
    ifm_http_pending *previous, *next;
};

static void ifm_http_unlink(ifm_http_pending *pending) {
    if (!pending->server) return;
    if (pending->previous) pending->previous->next = pending->next;
    else pending->server->pending = pending->next;
    if (pending->next) pending->next->previous = pending->previous;
    pending->server = NULL;
    pending->previous = pending->next = NULL;
}

static int ifm_http_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? (int)info->connect_fd : -1;
}

static void ifm_http_notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                                       enum MHD_ConnectionNotificationCode code) {
    (void)socket_context;
    ifm_http_server *server = cls;
    int fd = ifm_http_connection_fd(connection);
    if (fd < 0) return;
    server->peer_event(server->context, fd, code == MHD_CONNECTION_NOTIFY_STARTED ? IFM_HTTP_PEER_OPENED : IFM_HTTP_PEER_CLOSED);
}

static void ifm_http_notify_completed(void *cls, struct MHD_Connection *connection, void **request_state,
                                      enum MHD_RequestTerminationCode code) {
    ifm_http_pending *pending = request_state ? *request_state : NULL;
    if (pending) {
        *request_state = NULL;
        ifm_http_unlink(pending);
        if (pending->response) MHD_destroy_response(pending->response);
        pending->response = NULL;
        if (pending->completed) free(pending);
        else pending->gone = 1;
    }
    /* Only a request answered in full leaves the connection waiting for another one. */
    if (code != MHD_REQUEST_TERMINATED_COMPLETED_OK) return;
    ifm_http_server *server = cls;
    int fd = ifm_http_connection_fd(connection);
    if (fd >= 0) server->peer_event(server->context, fd, IFM_HTTP_PEER_ANSWERED);
}

struct ifm_http_exchange {
    ifm_http_server *server;
    struct MHD_Connection *connection;
    enum MHD_Result queued;
    int answered;
    ifm_http_pending *deferred;
};

/* The answer's body is not going to be used: its owner may let it go. */
static void ifm_http_discard(const ifm_http_response *answer) {
    if (answer->release) answer->release(answer->release_context);
}

/* The answer as libmicrohttpd sends it: headers copied; the body copied, or, with `release`,
 * sent from where it is and released when libmicrohttpd destroys the response (after its last
 * byte is sent, or when its connection ends), so the owner knows what unsent answers hold. */
static struct MHD_Response *ifm_http_response_of(const ifm_http_response *answer) {
    struct MHD_Response *response;
    if (answer->release && answer->body_length > 0) {
        response = MHD_create_response_from_buffer_with_free_callback_cls(
            answer->body_length, (void *)answer->body, answer->release, answer->release_context);
        if (!response) ifm_http_discard(answer);
    } else {
        /* An empty body may have no address at all, which libmicrohttpd's no-copy call refuses. */
        response = MHD_create_response_from_buffer(answer->body_length, (void *)answer->body, MHD_RESPMEM_MUST_COPY);
        ifm_http_discard(answer);
    }
    if (!response) return NULL;
    if (answer->content_type) MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, answer->content_type);
    if (answer->content_encoding)
        MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_ENCODING, answer->content_encoding);
    if (answer->allow) MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, answer->allow);
    /* The body depends on Accept and Accept-Encoding: caches must key on both. */
    MHD_add_response_header(response, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
    for (size_t index = 0; index < answer->header_count; index++)
        MHD_add_response_header(response, answer->header_names[index], answer->header_values[index]);
    return response;
}

void ifm_http_answer(ifm_http_exchange *exchange, const ifm_http_response *answer) {
    if (exchange->answered || exchange->deferred) {
        ifm_http_discard(answer);
        return;
    }
    exchange->answered = 1;
    struct MHD_Response *response = ifm_http_response_of(answer);
    if (!response) return;
    exchange->queued = MHD_queue_response(exchange->connection, answer->status, response);
    MHD_destroy_response(response);
}

ifm_http_pending *ifm_http_defer(ifm_http_exchange *exchange) {
    if (exchange->answered || exchange->deferred) return NULL;
    ifm_http_pending *pending = calloc(1, sizeof *pending);
    if (!pending) return NULL;
    pending->server = exchange->server;
    pending->connection = exchange->connection;
    pending->next = exchange->server->pending;
    if (pending->next) pending->next->previous = pending;
    exchange->server->pending = pending;
    exchange->deferred = pending;
    return pending;
}

void ifm_http_complete(ifm_http_pending *pending, const ifm_http_response *answer) {
    if (pending->gone) {
        ifm_http_discard(answer);
        free(pending);
        return;
    }
    pending->completed = 1;
    pending->response = ifm_http_response_of(answer);
    /* With no response (out of memory) the connection is resumed all the same, and answered
     * 500 by the access handler, rather than left suspended for ever. */
    pending->status = pending->response ? answer->status : MHD_HTTP_INTERNAL_SERVER_ERROR;
    ifm_http_unlink(pending);
    MHD_resume_connection(pending->connection);
}

/* Collects the query string's arguments with their lengths, up to IFM_HTTP_MAX_ARGUMENTS:
 * the `_n` iterator, because a decoded `%00` ends a C string early and `lo%00zz` would be
 * read as `lo`. */
static enum MHD_Result ifm_http_argument(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                         const char *value, size_t value_size) {
    (void)kind;
    ifm_http_request *request = cls;
    if (request->argument_count == IFM_HTTP_MAX_ARGUMENTS) {
        request->too_many_arguments = 1;
        return MHD_NO;
    }
    request->argument_keys[request->argument_count] = key;
    request->argument_values[request->argument_count] = value;
    request->argument_key_sizes[request->argument_count] = key_size;
    request->argument_value_sizes[request->argument_count] = value ? value_size : 0;
    request->argument_count++;
    return MHD_YES;
}

static enum MHD_Result ifm_http_access(void *cls, struct MHD_Connection *connection, const char *url,
                                       const char *method, const char *version, const char *upload_data,
                                       size_t *upload_data_size, void **request_state) {
    (void)version;
    (void)upload_data;
    /* A request with a body is answered on its first call; the body is never read (MHD then
     * closes the connection instead of reading it). */
    (void)upload_data_size;
    ifm_http_server *server = cls;
    ifm_http_pending *resumed = *request_state;
    if (resumed) {
        if (resumed->gone) return MHD_NO;
        /* Called again once a deferred answer resumed the connection: send it. */
        if (!resumed->response) {
            static const char failed[] = "the answer could not be made\n";
            resumed->response = MHD_create_response_from_buffer(sizeof failed - 1, (void *)failed, MHD_RESPMEM_PERSISTENT);
            if (!resumed->response) return MHD_NO;
        }
        enum MHD_Result queued = MHD_queue_response(connection, resumed->status, resumed->response);
        MHD_destroy_response(resumed->response);
        resumed->response = NULL;
        return queued;
    }
    ifm_http_request request = {
        .method = method,
        .url = url,
        .accept = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT),
        .accept_encoding = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING),
        .host = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST),
        .fd = ifm_http_connection_fd(connection),
    };
    MHD_get_connection_values_n(connection, MHD_GET_ARGUMENT_KIND, ifm_http_argument, &request);
    ifm_http_exchange exchange = { .server = server, .connection = connection, .queued = MHD_NO };
    server->handler(server->context, &request, &exchange);
    if (exchange.deferred) {
        *request_state = exchange.deferred;
        MHD_suspend_connection(connection);
        return MHD_YES;
    }
    return exchange.queued;
}

ifm_http_server *ifm_http_start(int listen_fd, const ifm_http_limits *limits, ifm_http_handler handler,
                                ifm_http_peer_event peer_event, void *context) {
    ifm_http_server *server = calloc(1, sizeof *server);
    if (!server) return NULL;
    server->handler = handler;
    server->peer_event = peer_event;
    server->context = context;
    /* MHD_USE_EPOLL without an internal thread: MHD gives us one epoll descriptor to watch and
     * does its work only inside ifm_http_run, on the daemon's loop thread. */
    server->daemon = MHD_start_daemon(
        /* Suspending a connection whose answer comes from another thread's work. */
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, ifm_http_access, server,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
        MHD_OPTION_CONNECTION_LIMIT, limits->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, limits->max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, limits->timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits->memory_per_connection,
        MHD_OPTION_NOTIFY_CONNECTION, ifm_http_notify_connection, server,
        MHD_OPTION_NOTIFY_COMPLETED, ifm_http_notify_completed, server,
        MHD_OPTION_END);
    if (!server->daemon) {
        int saved = errno ? errno : EINVAL;
        free(server);
        errno = saved;
        return NULL;
    }
    return server;
}

int ifm_http_fd(ifm_http_server *server) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -EBADF;
}

void ifm_http_run(ifm_http_server *server) { MHD_run(server->daemon); }

int64_t ifm_http_timeout_ms(ifm_http_server *server) {
    MHD_UNSIGNED_LONG_LONG timeout = 0;
    if (MHD_get_timeout(server->daemon, &timeout) != MHD_YES) return -1;
    return timeout > INT64_MAX ? INT64_MAX : (int64_t)timeout;
}

void ifm_http_stop(ifm_http_server *server) {
    if (!server) return;
    /* A suspended connection must be resumed before the daemon stops; its answer, if it still
     * comes, is only let go. */
    while (server->pending) {
        ifm_http_pending *pending = server->pending;
        ifm_http_unlink(pending);
        pending->gone = 1;
        MHD_resume_connection(pending->connection);
    }
    MHD_stop_daemon(server->daemon);
    free(server);
}

int ifm_http_listen(const char *address, uint16_t port) {
    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof storage);
    socklen_t length;
    if (address[0] == '\0') address = "::";
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
    if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        length = sizeof *v6;
    } else if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        length = sizeof *v4;
    } else {
        return -EINVAL;
    }
    int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int on = 1;
    /* A restart must not wait out TIME_WAIT connections of the previous process. */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, (struct sockaddr *)&storage, length) < 0 || listen(fd, 64) < 0) {
        int saved = errno;
        close(fd);
        return -saved;
    }
    return fd;
}

int ifm_http_bound_port(int fd) {
    struct sockaddr_storage storage;
    socklen_t length = sizeof storage;
    if (getsockname(fd, (struct sockaddr *)&storage, &length) < 0) return -errno;
    if (storage.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&storage)->sin6_port);
    if (storage.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&storage)->sin_port);
    return -EAFNOSUPPORT;
}

int ifm_http_peer_gone(int fd) {
    struct pollfd entry = { .fd = fd, .events = POLLRDHUP };
    int ready;
    do ready = poll(&entry, 1, 0);
    while (ready < 0 && errno == EINTR);
    if (ready < 0) return -errno;
    return (entry.revents & (POLLRDHUP | POLLHUP | POLLERR)) ? 1 : 0;
}

int ifm_http_peer_address(int fd, char *text, size_t size) {
    struct sockaddr_storage storage;
    socklen_t length = sizeof storage;
    if (getpeername(fd, (struct sockaddr *)&storage, &length) < 0) return -errno;
    const void *address;
    int family = storage.ss_family;
    if (family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)&storage;
        /* A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d: one address, one name. */
        if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
            address = &v6->sin6_addr.s6_addr[12];
            family = AF_INET;
        } else {
            address = &v6->sin6_addr;
        }
    } else if (family == AF_INET) {
        address = &((const struct sockaddr_in *)&storage)->sin_addr;
    } else {
        return -EAFNOSUPPORT;
    }
    return inet_ntop(family, address, text, (socklen_t)size) ? 0 : -errno;
}

struct ifm_http_gzip {
    z_stream stream;
    uint8_t *out;
    size_t capacity;
};

ifm_http_gzip *ifm_http_gzip_begin(void) {
    ifm_http_gzip *gzip = calloc(1, sizeof *gzip);
    if (!gzip) return NULL;
    /* windowBits 15 + 16: a gzip header and trailer, as Content-Encoding: gzip requires.
     * Level 1: an exposition is repetitive enough that the fastest level already shrinks it
     * about tenfold, and a scrape should cost the loop as little as possible. */
    if (deflateInit2(&gzip->stream, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(gzip);
        return NULL;
    }
    return gzip;
}

static int ifm_http_gzip_pump(ifm_http_gzip *gzip, int flush) {
    for (;;) {
        if (gzip->stream.total_out + 4096 > gzip->capacity) {
            size_t capacity = gzip->capacity ? gzip->capacity * 2 : 65536;
            uint8_t *grown = realloc(gzip->out, capacity);
            if (!grown) return -ENOMEM;
            gzip->out = grown;
            gzip->capacity = capacity;
        }
        gzip->stream.next_out = gzip->out + gzip->stream.total_out;
        gzip->stream.avail_out = (uInt)(gzip->capacity - gzip->stream.total_out);
        int result = deflate(&gzip->stream, flush);
        if (result == Z_STREAM_END) return 0;
        if (result != Z_OK && result != Z_BUF_ERROR) return -ENOMEM;
        if (flush == Z_NO_FLUSH && gzip->stream.avail_in == 0) return 0;
    }
}

int ifm_http_gzip_add(ifm_http_gzip *gzip, const uint8_t *bytes, size_t length) {
    gzip->stream.next_in = (Bytef *)bytes;
    gzip->stream.avail_in = (uInt)length;
    return ifm_http_gzip_pump(gzip, Z_NO_FLUSH);
}

int ifm_http_gzip_finish(ifm_http_gzip *gzip, const uint8_t **bytes, size_t *length) {
    gzip->stream.next_in = NULL;
    gzip->stream.avail_in = 0;
    int result = ifm_http_gzip_pump(gzip, Z_FINISH);
    *bytes = gzip->out;
    *length = gzip->stream.total_out;
    return result;
}

void ifm_http_gzip_free(ifm_http_gzip *gzip) {
    if (!gzip) return;
    deflateEnd(&gzip->stream);
    free(gzip->out);
    free(gzip);
}
