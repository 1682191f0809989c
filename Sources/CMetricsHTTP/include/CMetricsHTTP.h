/* The metrics endpoint's C: libmicrohttpd driven from the daemon's own sd-event loop (no thread
 * of its own), a TCP listener, and gzip through zlib. No policy: which paths exist, what is
 * answered and when to compress are decided in Swift. Every symbol is prefixed `ifm_http_`. */
#ifndef CMETRICSHTTP_H
#define CMETRICSHTTP_H

#include <stddef.h>
#include <stdint.h>

/* At most this many query arguments are passed on; a request with more says so. */
#define IFM_HTTP_MAX_ARGUMENTS 32

/* What one request asked; valid during the handler call only. Absent headers are NULL. */
typedef struct {
    const char *method;
    const char *url;
    const char *accept;
    const char *accept_encoding;
    const char *host;
    /* The connection's socket, as in ifm_http_peer_event. */
    int fd;
    /* The query string's arguments as libmicrohttpd decoded them, in order; a value is NULL for
     * a key without `=`. `too_many_arguments` is 1 when some were left out. */
    const char *argument_keys[IFM_HTTP_MAX_ARGUMENTS];
    const char *argument_values[IFM_HTTP_MAX_ARGUMENTS];
    /* Their lengths in bytes: a decoded `%00` is a byte of the text, not its end. */
    size_t argument_key_sizes[IFM_HTTP_MAX_ARGUMENTS];
    size_t argument_value_sizes[IFM_HTTP_MAX_ARGUMENTS];
    size_t argument_count;
    int too_many_arguments;
} ifm_http_request;

/* Called once when libmicrohttpd no longer needs an answer's body (sent, or its connection
 * gone), with the answer's `release_context`. */
typedef void (*ifm_http_release)(void *context);

/* An answer; `content_encoding` and `allow` are sent when not NULL. The headers are copied by
 * `ifm_http_answer` and `ifm_http_complete`, so they need only be valid during that call. The
 * body is copied too, unless `release` is set: then it is sent from where it is, and must stay
 * valid until `release(release_context)`, which is called exactly once whatever happens to the
 * answer (at once when it cannot be used). */
typedef struct {
    unsigned int status;
    const char *content_type;
    const char *content_encoding;
    const char *allow;
    const uint8_t *body;
    size_t body_length;
    /* More headers, `header_count` names and values (a page's security headers). */
    const char *const *header_names;
    const char *const *header_values;
    size_t header_count;
    ifm_http_release release;
    void *release_context;
} ifm_http_response;

/* One request being answered; valid during the handler call only. */
typedef struct ifm_http_exchange ifm_http_exchange;

/* Called once per request; must either call `ifm_http_answer` or `ifm_http_defer` before
 * returning. */
typedef void (*ifm_http_handler)(void *context, const ifm_http_request *request, ifm_http_exchange *exchange);

/* Queues the answer to the exchange's request. */
void ifm_http_answer(ifm_http_exchange *exchange, const ifm_http_response *response);

/* An answer given later: its connection is suspended (nothing else of it is read or written)
 * until `ifm_http_complete`. */
typedef struct ifm_http_pending ifm_http_pending;

/* The exchange's request is answered later; NULL when it cannot be (then answer it now). */
ifm_http_pending *ifm_http_defer(ifm_http_exchange *exchange);

/* Gives a deferred request its answer and resumes its connection, to be sent at the
 * next `ifm_http_run`; or, when the connection or the server went meanwhile, only lets the
 * handle go. Call exactly once per handle. */
void ifm_http_complete(ifm_http_pending *pending, const ifm_http_response *response);

typedef struct ifm_http_server ifm_http_server;

/* What happens to a connection, for the caller's admission policy (which may end one with
 * shutdown(fd, SHUT_RDWR): libmicrohttpd then reads its end and closes it). */
typedef enum {
    IFM_HTTP_PEER_OPENED = 0,
    IFM_HTTP_PEER_ANSWERED = 1, /* a request's answer was sent: the connection waits for the next */
    IFM_HTTP_PEER_CLOSED = 2,
} ifm_http_peer_event_kind;

typedef void (*ifm_http_peer_event)(void *context, int fd, ifm_http_peer_event_kind kind);

/* Limits that keep a slow or hostile client from costing the daemon anything but one slot. */
typedef struct {
    unsigned int max_connections;
    unsigned int max_connections_per_ip;
    /* Seconds a connection may stay idle or unfinished. */
    unsigned int timeout_seconds;
    /* Bytes per connection for the request line and headers; a request whose headers do not
     * fit is refused. */
    size_t memory_per_connection;
} ifm_http_limits;

/* Serves on `listen_fd` (a listening TCP socket, which the server then owns). Returns NULL and
 * sets errno when libmicrohttpd refuses. */
ifm_http_server *ifm_http_start(int listen_fd, const ifm_http_limits *limits, ifm_http_handler handler,
                                ifm_http_peer_event peer_event, void *context);

/* The descriptor to watch for input (an epoll set of the listener and connections). */
int ifm_http_fd(ifm_http_server *server);

/* Does whatever is ready; call when the descriptor is readable and when the timeout passes. */
void ifm_http_run(ifm_http_server *server);

/* Milliseconds until `ifm_http_run` must be called even without input, or -1 for none. */
int64_t ifm_http_timeout_ms(ifm_http_server *server);

void ifm_http_stop(ifm_http_server *server);

/* A listening TCP socket on a numeric IPv4 or IPv6 address ("" or "::" for every address),
 * non-blocking and close-on-exec. The descriptor, or -errno; -EINVAL for an address that is
 * not numeric. */
int ifm_http_listen(const char *address, uint16_t port);

/* The port a listening socket is bound to (for port 0), or -errno. */
int ifm_http_bound_port(int fd);

/* 1 when the peer of a connected socket has closed it or shut down its sending side, or the
 * connection failed; 0 when not; -errno. Without waiting. libmicrohttpd does not watch a
 * suspended connection, so a client that left while its answer waited is found out this way. */
int ifm_http_peer_gone(int fd);

/* The peer address of a connected socket as text, without the port ("127.0.0.2", "::1";
 * an IPv4-mapped IPv6 address as IPv4). 0, or -errno. */
int ifm_http_peer_address(int fd, char *text, size_t size);

/* gzip, fed in pieces so a large exposition is never held whole uncompressed. */
typedef struct ifm_http_gzip ifm_http_gzip;
ifm_http_gzip *ifm_http_gzip_begin(void);
/* 0, or -ENOMEM. */
int ifm_http_gzip_add(ifm_http_gzip *gzip, const uint8_t *bytes, size_t length);
/* Ends the stream; the compressed bytes stay valid until `ifm_http_gzip_free`. 0 or -ENOMEM. */
int ifm_http_gzip_finish(ifm_http_gzip *gzip, const uint8_t **bytes, size_t *length);
void ifm_http_gzip_free(ifm_http_gzip *gzip);

#endif
