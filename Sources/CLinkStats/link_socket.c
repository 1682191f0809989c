/* CLinkStats: netlink sockets, the one receive loop, and dumps retried until whole. */
#include "CLinkStats.h"
#include "link_shared.h"

#include <errno.h>
#include <limits.h>
#include <linux/sock_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

/* The kernel sizes dump batches from the reader's buffer (capped at 32 KiB); twice that leaves
 * room for one oversized link message. A message that still does not fit grows the buffer. */
#define IFM_RECV_BUFFER_INITIAL (64 * 1024)
#define IFM_RECV_BUFFER_MAX (16 * 1024 * 1024)
/* Event sockets: thousands of links churning at once must not overflow a default 208 KiB
 * buffer. Above net.core.rmem_max only root (CAP_NET_ADMIN) gets this much. */
#define IFM_EVENT_RCVBUF (8 * 1024 * 1024)
/* A dump interrupted by concurrent link changes (NLM_F_DUMP_INTR) may miss links; retried. */
#define IFM_DUMP_ATTEMPTS 4

int ifm_errno_from_nle(int nle) {
    switch (nle < 0 ? -nle : nle) {
    case NLE_SUCCESS: return 0;
    case NLE_INTR: return EINTR;
    case NLE_BAD_SOCK: return EBADF;
    case NLE_AGAIN: return EAGAIN;
    case NLE_NOMEM: return ENOMEM;
    case NLE_EXIST: return EEXIST;
    case NLE_INVAL: return EINVAL;
    case NLE_RANGE: return ERANGE;
    case NLE_MSGSIZE: return EMSGSIZE;
    case NLE_OPNOTSUPP: return EOPNOTSUPP;
    case NLE_AF_NOSUPPORT: return EAFNOSUPPORT;
    case NLE_OBJ_NOTFOUND: return ENOENT;
    case NLE_NOATTR: return ENOENT;
    case NLE_MSG_TRUNC: return EMSGSIZE;
    case NLE_NOADDR: return EADDRNOTAVAIL;
    case NLE_SRCRT_NOSUPPORT: return EOPNOTSUPP;
    case NLE_MSG_TOOSHORT: return EPROTO;
    case NLE_MSGTYPE_NOSUPPORT: return EOPNOTSUPP;
    case NLE_OBJ_MISMATCH: return EPROTO;
    case NLE_NOCACHE: return ENOENT;
    case NLE_BUSY: return EBUSY;
    case NLE_PROTO_MISMATCH: return EPROTONOSUPPORT;
    case NLE_NOACCESS: return EACCES;
    case NLE_PERM: return EPERM;
    case NLE_NODEV: return ENODEV;
    default: return EIO;
    }
}

/* Ensures room for `needed` elements of `size` bytes; keeps existing contents. */
int ifm_reserve(void **items, size_t *capacity, size_t needed, size_t size) {
    if (needed <= *capacity) return 0;
    size_t grown = *capacity ? *capacity : 64;
    while (grown < needed) grown *= 2;
    void *resized = realloc(*items, grown * size);
    if (!resized) return -ENOMEM;
    *items = resized;
    *capacity = grown;
    return 0;
}

void ifm_link_array_free(ifm_link_array *array) {
    free(array->items);
    array->items = NULL;
    array->count = array->capacity = 0;
}

void ifm_counters_array_free(ifm_counters_array *array) {
    free(array->items);
    array->items = NULL;
    array->count = array->capacity = 0;
}

void ifm_event_array_free(ifm_event_array *array) {
    free(array->items);
    array->items = NULL;
    array->count = array->capacity = 0;
}

/* A handle with its buffer and an unconnected libnl socket; NULL when memory ran out. */
static ifm_nl *ifm_nl_alloc(void) {
    ifm_nl *nl = calloc(1, sizeof *nl);
    if (!nl) return NULL;
    nl->buf_size = IFM_RECV_BUFFER_INITIAL;
    nl->buf = malloc(nl->buf_size);
    nl->sock = nl_socket_alloc();
    if (!nl->buf || !nl->sock) {
        ifm_nl_close(nl);
        return NULL;
    }
    /* Requests are completed by nl_send_auto; replies are read and matched here, by sequence
     * number, so libnl's own ack and sequence machinery stays out of the way. */
    nl_socket_disable_auto_ack(nl->sock);
    return nl;
}

/* A netlink socket connected to the kernel refuses datagrams from every other socket
 * (ECONNREFUSED at the sender, netlink_getsockbyportid): a local user cannot fill its queue
 * with forged messages and so make the kernel drop real ones. Multicast is delivered as before. */
static int ifm_connect_to_kernel(int fd) {
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    return connect(fd, (struct sockaddr *)&kernel, sizeof kernel) == 0 ? 0 : -errno;
}

/* Joins the groups an event socket hears: links, and with `nsids`, the numbers this namespace
 * gives others (a peers socket needs none: the own socket hears this namespace's deletions of
 * them, and other namespaces' numbers say nothing about the daemon's). */
static int ifm_join_event_groups(ifm_nl *nl, int nsids) {
    int err = nl_socket_add_membership(nl->sock, RTNLGRP_LINK);
    if (err == 0 && nsids) err = nl_socket_add_membership(nl->sock, RTNLGRP_NSID);
    if (err == 0) err = nl_socket_set_nonblocking(nl->sock);
    return err < 0 ? -ifm_errno_from_nle(err) : 0;
}

int ifm_nl_open(ifm_nl **out) {
    *out = NULL;
    ifm_nl *nl = ifm_nl_alloc();
    if (!nl) return -ENOMEM;
    int err = nl_connect(nl->sock, NETLINK_ROUTE);
    err = err < 0 ? -ifm_errno_from_nle(err) : ifm_connect_to_kernel(nl_socket_get_fd(nl->sock));
    if (err < 0) {
        ifm_nl_close(nl);
        return err;
    }
    *out = nl;
    return 0;
}

/* Listens to every namespace this one has an nsid for; only their deletions are kept. */
static int ifm_listen_to_peers(ifm_nl *nl) {
    int on = 1;
    if (setsockopt(nl_socket_get_fd(nl->sock), SOL_NETLINK, NETLINK_LISTEN_ALL_NSID, &on, sizeof on) != 0)
        return -errno;
    nl->peers_only = 1;
    return 0;
}

/* Messages queued while no ifmeterd read the socket predate the start dump that follows:
 * applied after it, they would undo what it found. What arrives from now on is newer. */
static void ifm_discard_queued(ifm_nl *nl) {
    int fd = nl_socket_get_fd(nl->sock);
    for (;;) {
        ssize_t n = recv(fd, nl->buf, nl->buf_size, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != ENOBUFS) break;
    }
}

/* An event socket of either kind: `groups` joined, and with `peers` listening to every nsid. */
static int ifm_events_from(ifm_nl *nl, int fd, int peers) {
    int err = ifm_connect_to_kernel(fd);
    if (err == 0) err = ifm_join_event_groups(nl, !peers);
    if (err == 0 && peers) err = ifm_listen_to_peers(nl);
    return err;
}

int ifm_nl_open_events(ifm_nl **out, int peers) {
    *out = NULL;
    ifm_nl *nl = ifm_nl_alloc();
    if (!nl) return -ENOMEM;
    int err = nl_connect(nl->sock, NETLINK_ROUTE);
    if (err < 0) {
        ifm_nl_close(nl);
        return -ifm_errno_from_nle(err);
    }
    int fd = nl_socket_get_fd(nl->sock);
    int size = IFM_EVENT_RCVBUF;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size); /* capped, not fatal */
    err = ifm_events_from(nl, fd, peers);
    if (err < 0) {
        ifm_nl_close(nl);
        return err;
    }
    *out = nl;
    return 0;
}

int ifm_nl_adopt_events(int fd, int peers, ifm_nl **out) {
    *out = NULL;
    ifm_nl *nl = ifm_nl_alloc();
    if (!nl) return -ENOMEM;
    int err = nl_socket_set_fd(nl->sock, NETLINK_ROUTE, fd);
    if (err < 0) {
        ifm_nl_close(nl);
        return -ifm_errno_from_nle(err);
    }
    /* Joining RTNLGRP_LINK again is harmless when the unit named it (ListenNetlink=route 1). */
    err = ifm_events_from(nl, fd, peers);
    if (err < 0) {
        ifm_nl_close(nl);
        return err;
    }
    ifm_discard_queued(nl);
    *out = nl;
    return 0;
}

void ifm_nl_close(ifm_nl *nl) {
    if (!nl) return;
    if (nl->sock) nl_socket_free(nl->sock); /* closes the descriptor */
    free(nl->buf);
    free(nl);
}

int ifm_nl_fd(const ifm_nl *nl) { return nl_socket_get_fd(nl->sock); }

int ifm_nl_queued_bytes(const ifm_nl *nl) {
    uint32_t meminfo[SK_MEMINFO_VARS] = { 0 };
    socklen_t len = sizeof meminfo;
    if (getsockopt(nl_socket_get_fd(nl->sock), SOL_SOCKET, SO_MEMINFO, meminfo, &len) != 0) return -errno;
    return meminfo[SK_MEMINFO_RMEM_ALLOC] > INT_MAX ? INT_MAX : (int)meminfo[SK_MEMINFO_RMEM_ALLOC];
}

int ifm_nl_rcvbuf(const ifm_nl *nl) {
    int size = 0;
    socklen_t len = sizeof size;
    if (getsockopt(nl_socket_get_fd(nl->sock), SOL_SOCKET, SO_RCVBUF, &size, &len) != 0)
        return -errno;
    return size;
}

/* The one place that receives: retries EINTR, drops datagrams not sent by the kernel, and
 * reports a datagram larger than the buffer as -EMSGSIZE (its contents are lost) after growing
 * the buffer for next time. Returns the byte count (0 for a datagram another process sent,
 * which is dropped) or -errno. With `source_nsid`, says which
 * namespace a notification came from (a socket that listens to all nsids): its nsid, or -1 for
 * this socket's own. */
ssize_t ifm_recv_from(ifm_nl *nl, int flags, int32_t *source_nsid) {
    for (;;) {
        struct sockaddr_nl from;
        struct iovec iov = { .iov_base = nl->buf, .iov_len = nl->buf_size };
        union {
            struct cmsghdr align;
            char bytes[CMSG_SPACE(sizeof(int))];
        } control;
        struct msghdr msg = {
            .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1,
            .msg_control = source_nsid ? control.bytes : NULL,
            .msg_controllen = source_nsid ? sizeof control.bytes : 0,
        };
        ssize_t n = recvmsg(nl_socket_get_fd(nl->sock), &msg, flags);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        nl->last_datagram = (size_t)n;
        /* Another process, not the kernel: never trusted. Said as an empty datagram rather than
         * skipped here, so a forger's flood counts against the caller's read budget. */
        if (from.nl_pid != 0) return 0;
        if (msg.msg_flags & MSG_TRUNC) {
            if (nl->buf_size < IFM_RECV_BUFFER_MAX) {
                uint8_t *bigger = realloc(nl->buf, nl->buf_size * 2);
                if (!bigger) return -ENOMEM;
                nl->buf = bigger;
                nl->buf_size *= 2;
            }
            return -EMSGSIZE;
        }
        if (source_nsid) {
            *source_nsid = -1;
            for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level == SOL_NETLINK && c->cmsg_type == NETLINK_LISTEN_ALL_NSID
                    && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
                    int nsid;
                    memcpy(&nsid, CMSG_DATA(c), sizeof nsid);
                    *source_nsid = nsid;
                }
            }
        }
        return n;
    }
}

ssize_t ifm_recv(ifm_nl *nl, int flags) { return ifm_recv_from(nl, flags, NULL); }

int ifm_nlmsg_error(const struct nlmsghdr *hdr) {
    if (hdr->nlmsg_len < nlmsg_size(sizeof(struct nlmsgerr))) return -EPROTO;
    const struct nlmsgerr *e = nlmsg_data((struct nlmsghdr *)hdr);
    return e->error < 0 ? e->error : -EPROTO;
}

int ifm_request_reply(ifm_nl *nl, struct nl_msg *request, ifm_reply_parser parse, void *context) {
    int sent = nl_send_auto(nl->sock, request);
    uint32_t seq = nlmsg_hdr(request)->nlmsg_seq;
    nlmsg_free(request);
    if (sent < 0) return -ifm_errno_from_nle(sent);
    for (;;) {
        ssize_t n = ifm_recv(nl, 0);
        if (n < 0) return (int)n;
        int result = parse(nl->buf, (size_t)n, seq, context);
        if (result != -EAGAIN) return result;
    }
}

/* Sends `request` and feeds every reply message carrying its sequence number to `handler`
 * until NLMSG_DONE. Messages of an earlier, abandoned dump are skipped. Returns 0, -errno, or
 * -EAGAIN when the kernel flagged the dump as interrupted by concurrent changes. */
static int ifm_dump_once(ifm_nl *nl, struct nl_msg *request, ifm_dump_handler handler,
                         void *context) {
    int sent = nl_send_auto(nl->sock, request);
    if (sent < 0) return -ifm_errno_from_nle(sent);
    uint32_t seq = nlmsg_hdr(request)->nlmsg_seq;
    int interrupted = 0;
    for (;;) {
        ssize_t n = ifm_recv(nl, 0);
        if (n < 0) return (int)n;
        int remaining = (int)n;
        for (struct nlmsghdr *hdr = (struct nlmsghdr *)nl->buf; nlmsg_ok(hdr, remaining);
             hdr = nlmsg_next(hdr, &remaining)) {
            if (hdr->nlmsg_seq != seq) continue;
            if (hdr->nlmsg_flags & NLM_F_DUMP_INTR) interrupted = 1;
            if (hdr->nlmsg_type == NLMSG_DONE) return interrupted ? -EAGAIN : 0;
            if (hdr->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *e = nlmsg_data(hdr);
                if (hdr->nlmsg_len < nlmsg_size(sizeof *e)) return -EPROTO;
                return e->error < 0 ? e->error : -EPROTO;
            }
            int err = handler(hdr, context);
            if (err < 0) return err;
        }
    }
}

/* Runs a dump until it completes uninterrupted, emptying the output before each attempt. */
int ifm_dump(ifm_nl *nl, struct nl_msg *request, ifm_dump_handler handler, void *context,
             size_t *output_count) {
    int err = -EAGAIN;
    for (int attempt = 0; attempt < IFM_DUMP_ATTEMPTS && (err == -EAGAIN || err == -EMSGSIZE);
         attempt++) {
        *output_count = 0;
        err = ifm_dump_once(nl, request, handler, context);
    }
    return err;
}

