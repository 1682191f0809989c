/* CLinkStats: netlink dumps and link events through libnl, and the getifaddrs fallback. */
#include "CLinkStats.h"

#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>

/* Swift reads these structs field by field; the array element strides must stay what the
 * header promises, whatever the compiler does with padding. */
_Static_assert(sizeof(ifm_counters) == 8 * sizeof(uint64_t), "ifm_counters must be unpadded");
_Static_assert(sizeof(ifm_link_counters) == 8 + sizeof(ifm_counters), "ifm_link_counters layout");
_Static_assert(IFM_NAME_SIZE == IFNAMSIZ, "interface names are IFNAMSIZ bytes");

/* The kernel sizes dump batches from the reader's buffer (capped at 32 KiB); twice that leaves
 * room for one oversized link message. A message that still does not fit grows the buffer. */
#define IFM_RECV_BUFFER_INITIAL (64 * 1024)
#define IFM_RECV_BUFFER_MAX (16 * 1024 * 1024)
/* Event sockets: thousands of links churning at once must not overflow a default 208 KiB
 * buffer. Above net.core.rmem_max only root (CAP_NET_ADMIN) gets this much. */
#define IFM_EVENT_RCVBUF (8 * 1024 * 1024)
/* A dump interrupted by concurrent link changes (NLM_F_DUMP_INTR) may miss links; retried. */
#define IFM_DUMP_ATTEMPTS 4
/* One read_events call stops after this many batches so a storm cannot starve the caller. */
#define IFM_EVENT_BATCHES_PER_READ 1024

/* The kernel's struct rtnl_link_stats (32-bit) and rtnl_link_stats64 share their field names. */
#define IFM_COUNTERS_FROM(stats)                                                           \
    ((ifm_counters){                                                                       \
        .rx_bytes = (stats)->rx_bytes, .tx_bytes = (stats)->tx_bytes,                      \
        .rx_packets = (stats)->rx_packets, .tx_packets = (stats)->tx_packets,              \
        .rx_errors = (stats)->rx_errors, .tx_errors = (stats)->tx_errors,                  \
        .rx_dropped = (stats)->rx_dropped, .tx_dropped = (stats)->tx_dropped,              \
    })

struct ifm_nl {
    struct nl_sock *sock;
    uint8_t *buf;
    size_t buf_size;
};

/* libnl reports its own NLE_* codes; the Swift side speaks errno. */
static int ifm_errno_from_nle(int nle) {
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
static int ifm_reserve(void **items, size_t *capacity, size_t needed, size_t size) {
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

int ifm_nl_open(ifm_nl **out, int subscribe_links) {
    *out = NULL;
    ifm_nl *nl = ifm_nl_alloc();
    if (!nl) return -ENOMEM;
    int err = nl_connect(nl->sock, NETLINK_ROUTE);
    if (err < 0) {
        ifm_nl_close(nl);
        return -ifm_errno_from_nle(err);
    }
    if (subscribe_links) {
        int fd = nl_socket_get_fd(nl->sock);
        int size = IFM_EVENT_RCVBUF;
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0)
            (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size); /* capped, not fatal */
        err = nl_socket_add_membership(nl->sock, RTNLGRP_LINK);
        if (err == 0) err = nl_socket_set_nonblocking(nl->sock);
        if (err < 0) {
            ifm_nl_close(nl);
            return -ifm_errno_from_nle(err);
        }
    }
    *out = nl;
    return 0;
}

int ifm_nl_adopt_events(int fd, ifm_nl **out) {
    *out = NULL;
    ifm_nl *nl = ifm_nl_alloc();
    if (!nl) return -ENOMEM;
    int err = nl_socket_set_fd(nl->sock, NETLINK_ROUTE, fd);
    /* Joining again is harmless when the unit named the group (ListenNetlink=route 1), and
     * covers one that did not. */
    if (err == 0) err = nl_socket_add_membership(nl->sock, RTNLGRP_LINK);
    if (err == 0) err = nl_socket_set_nonblocking(nl->sock);
    if (err < 0) {
        ifm_nl_close(nl);
        return -ifm_errno_from_nle(err);
    }
    /* Messages queued while no ifmeterd read the socket predate the start dump that follows:
     * applied after it, they would undo what it found. What arrives from now on is newer. */
    for (;;) {
        ssize_t n = recv(fd, nl->buf, nl->buf_size, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != ENOBUFS) break;
    }
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

int ifm_nl_rcvbuf(const ifm_nl *nl) {
    int size = 0;
    socklen_t len = sizeof size;
    if (getsockopt(nl_socket_get_fd(nl->sock), SOL_SOCKET, SO_RCVBUF, &size, &len) != 0)
        return -errno;
    return size;
}

/* The one place that receives: retries EINTR, drops datagrams not sent by the kernel, and
 * reports a datagram larger than the buffer as -EMSGSIZE (its contents are lost) after growing
 * the buffer for next time. Returns the byte count or -errno. */
static ssize_t ifm_recv(ifm_nl *nl, int flags) {
    for (;;) {
        struct sockaddr_nl from;
        struct iovec iov = { .iov_base = nl->buf, .iov_len = nl->buf_size };
        struct msghdr msg = {
            .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1,
        };
        ssize_t n = recvmsg(nl_socket_get_fd(nl->sock), &msg, flags);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (from.nl_pid != 0) continue; /* another process, not the kernel: never trusted */
        if (msg.msg_flags & MSG_TRUNC) {
            if (nl->buf_size < IFM_RECV_BUFFER_MAX) {
                uint8_t *bigger = realloc(nl->buf, nl->buf_size * 2);
                if (!bigger) return -ENOMEM;
                nl->buf = bigger;
                nl->buf_size *= 2;
            }
            return -EMSGSIZE;
        }
        return n;
    }
}

/* Called for each reply message of a dump; returns 0 or -errno. */
typedef int (*ifm_dump_handler)(struct nlmsghdr *hdr, void *context);

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
static int ifm_dump(ifm_nl *nl, struct nl_msg *request, ifm_dump_handler handler, void *context,
                    size_t *output_count) {
    int err = -EAGAIN;
    for (int attempt = 0; attempt < IFM_DUMP_ATTEMPTS && (err == -EAGAIN || err == -EMSGSIZE);
         attempt++) {
        *output_count = 0;
        err = ifm_dump_once(nl, request, handler, context);
    }
    return err;
}

static void ifm_copy_name(char *dest, size_t size, const char *source) {
    snprintf(dest, size, "%s", source ? source : "");
}

struct ifm_parse_result {
    ifm_link *link;
    int parsed;
};

static void ifm_fill_from_object(struct nl_object *object, void *arg) {
    struct ifm_parse_result *result = arg;
    struct rtnl_link *source = (struct rtnl_link *)object;
    ifm_link *link = result->link;
    link->ifindex = rtnl_link_get_ifindex(source);
    link->flags = rtnl_link_get_flags(source);
    link->mtu = rtnl_link_get_mtu(source);
    link->master = rtnl_link_get_master(source);
    link->link = rtnl_link_get_link(source);
    link->arptype = (uint16_t)rtnl_link_get_arptype(source);
    link->family = (uint8_t)rtnl_link_get_family(source);
    link->operstate = rtnl_link_get_operstate(source);
    ifm_copy_name(link->name, sizeof link->name, rtnl_link_get_name(source));
    ifm_copy_name(link->kind, sizeof link->kind, rtnl_link_get_type(source));
    struct nl_addr *addr = rtnl_link_get_addr(source);
    if (addr) {
        unsigned int len = nl_addr_get_len(addr);
        if (len > IFM_ADDR_SIZE) len = IFM_ADDR_SIZE;
        link->addr_len = (uint8_t)len;
        memcpy(link->addr, nl_addr_get_binary_addr(addr), len);
    }
    ifm_counters *c = &link->counters;
    c->rx_bytes = rtnl_link_get_stat(source, RTNL_LINK_RX_BYTES);
    c->tx_bytes = rtnl_link_get_stat(source, RTNL_LINK_TX_BYTES);
    c->rx_packets = rtnl_link_get_stat(source, RTNL_LINK_RX_PACKETS);
    c->tx_packets = rtnl_link_get_stat(source, RTNL_LINK_TX_PACKETS);
    c->rx_errors = rtnl_link_get_stat(source, RTNL_LINK_RX_ERRORS);
    c->tx_errors = rtnl_link_get_stat(source, RTNL_LINK_TX_ERRORS);
    c->rx_dropped = rtnl_link_get_stat(source, RTNL_LINK_RX_DROPPED);
    c->tx_dropped = rtnl_link_get_stat(source, RTNL_LINK_TX_DROPPED);
    result->parsed = 1;
}

/* Parses one RTM_NEWLINK / RTM_DELLINK message by itself, through libnl-route's link parser
 * (never through a cache, which would hand back an older object than this message). */
static int ifm_parse_link_message(struct nlmsghdr *hdr, ifm_link *link) {
    memset(link, 0, sizeof *link);
    struct nl_msg *msg = nlmsg_convert(hdr);
    if (!msg) return -ENOMEM;
    /* A converted message has no protocol, and libnl picks its parser by protocol. */
    nlmsg_set_proto(msg, NETLINK_ROUTE);
    struct ifm_parse_result result = { .link = link, .parsed = 0 };
    int err = nl_msg_parse(msg, ifm_fill_from_object, &result);
    if (err == 0 && !result.parsed) err = -NLE_PARSE_ERR;
    if (err == 0) {
        const int header = sizeof(struct ifinfomsg);
        struct nlattr *stats64 = nlmsg_find_attr(hdr, header, IFLA_STATS64);
        struct nlattr *stats32 = nlmsg_find_attr(hdr, header, IFLA_STATS);
        link->has_stats = stats64 || stats32;
        link->stats_are_32bit = !stats64 && stats32;
    }
    nlmsg_free(msg);
    return err < 0 ? -ifm_errno_from_nle(err) : 0;
}

static int ifm_on_link(struct nlmsghdr *hdr, void *context) {
    ifm_link_array *out = context;
    if (hdr->nlmsg_type != RTM_NEWLINK) return 0;
    int err = ifm_reserve((void **)&out->items, &out->capacity, out->count + 1, sizeof(ifm_link));
    if (err < 0) return err;
    err = ifm_parse_link_message(hdr, &out->items[out->count]);
    if (err == -ENOMEM) return err;
    /* One link libnl refuses must not cost every other link (or the daemon's start). */
    if (err < 0) out->skipped++;
    else out->count++;
    return 0;
}

int ifm_nl_dump_links(ifm_nl *nl, ifm_link_array *out) {
    struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
    struct nl_msg *request = nlmsg_alloc_simple(RTM_GETLINK, NLM_F_DUMP);
    if (!request) return -ENOMEM;
    out->skipped = 0;
    int err = nlmsg_append(request, &ifi, sizeof ifi, NLMSG_ALIGNTO);
    if (err == 0) err = ifm_dump(nl, request, ifm_on_link, out, &out->count);
    else err = -ifm_errno_from_nle(err);
    nlmsg_free(request);
    return err < 0 ? err : (int)out->count;
}

static int ifm_on_counters(struct nlmsghdr *hdr, void *context);

int ifm_parse_counters(const void *buf, size_t len, ifm_counters_array *out) {
    int remaining = len > INT_MAX ? INT_MAX : (int)len;
    for (const struct nlmsghdr *hdr = buf; nlmsg_ok(hdr, remaining);
         hdr = nlmsg_next((struct nlmsghdr *)hdr, &remaining)) {
        int err = ifm_on_counters((struct nlmsghdr *)hdr, out);
        if (err < 0) return err;
    }
    return 0;
}

static int ifm_on_counters(struct nlmsghdr *hdr, void *context) {
    ifm_counters_array *out = context;
    if (hdr->nlmsg_type != RTM_NEWSTATS) return 0;
    struct nlattr *attrs[IFLA_STATS_MAX + 1];
    if (nlmsg_parse(hdr, sizeof(struct if_stats_msg), attrs, IFLA_STATS_MAX, NULL) < 0)
        return -EPROTO;
    struct nlattr *stats = attrs[IFLA_STATS_LINK_64];
    /* Older kernels send a shorter rtnl_link_stats64; the fields used here are its first 8. */
    if (!stats || nla_len(stats) < (int)(8 * sizeof(uint64_t))) return 0;
    int err = ifm_reserve((void **)&out->items, &out->capacity, out->count + 1,
                          sizeof(ifm_link_counters));
    if (err < 0) return err;
    const struct rtnl_link_stats64 *kernel = nla_data(stats);
    const struct if_stats_msg *ifsm = nlmsg_data(hdr);
    ifm_link_counters *row = &out->items[out->count++];
    row->ifindex = (int32_t)ifsm->ifindex;
    row->reserved = 0;
    row->counters = IFM_COUNTERS_FROM(kernel);
    return 0;
}

int ifm_nl_dump_counters(ifm_nl *nl, ifm_counters_array *out) {
    struct if_stats_msg ifsm = {
        .family = AF_UNSPEC,
        .filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64),
    };
    struct nl_msg *request = nlmsg_alloc_simple(RTM_GETSTATS, NLM_F_DUMP);
    if (!request) return -ENOMEM;
    int err = nlmsg_append(request, &ifsm, sizeof ifsm, NLMSG_ALIGNTO);
    if (err == 0) err = ifm_dump(nl, request, ifm_on_counters, out, &out->count);
    else err = -ifm_errno_from_nle(err);
    nlmsg_free(request);
    return err < 0 ? err : (int)out->count;
}

int ifm_parse_link_events(const void *buf, size_t len, ifm_event_array *out) {
    int remaining = len > INT_MAX ? INT_MAX : (int)len;
    for (const struct nlmsghdr *hdr = buf; nlmsg_ok(hdr, remaining);
         hdr = nlmsg_next((struct nlmsghdr *)hdr, &remaining)) {
        if (hdr->nlmsg_type != RTM_NEWLINK && hdr->nlmsg_type != RTM_DELLINK) continue;
        int err = ifm_reserve((void **)&out->items, &out->capacity, out->count + 1,
                              sizeof(ifm_link_event));
        if (err < 0) return err;
        ifm_link_event *event = &out->items[out->count];
        event->type = hdr->nlmsg_type == RTM_DELLINK ? IFM_EVENT_DEL_LINK : IFM_EVENT_NEW_LINK;
        event->reserved = 0;
        err = ifm_parse_link_message((struct nlmsghdr *)hdr, &event->link);
        if (err == -ENOMEM) return err;
        if (err < 0) out->skipped++;
        else out->count++;
    }
    return 0;
}

int ifm_nl_read_events(ifm_nl *nl, ifm_event_array *out) {
    size_t before = out->count;
    size_t skipped = out->skipped;
    int lost = 0;
    for (int batch = 0; batch < IFM_EVENT_BATCHES_PER_READ; batch++) {
        ssize_t n = ifm_recv(nl, MSG_DONTWAIT);
        if (n == -EAGAIN || n == -EWOULDBLOCK) break;
        /* Lost events: a dropped batch (ENOBUFS) or one too big for the buffer. Keep draining
         * so the caller's resync starts from an empty queue. */
        if (n == -ENOBUFS || n == -EMSGSIZE) {
            lost = 1;
            continue;
        }
        /* Any other failure: what this read would have held is unknown, so the caller
         * resyncs rather than dropping what was already read. */
        if (n < 0) {
            lost = 1;
            break;
        }
        int err = ifm_parse_link_events(nl->buf, (size_t)n, out);
        if (err < 0) return err;
    }
    if (out->skipped != skipped) lost = 1;
    return lost ? -ENOBUFS : (int)(out->count - before);
}

int ifm_getifaddrs_links(ifm_link_array *out) {
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0) return -errno;
    out->count = 0;
    int err = 0;
    for (struct ifaddrs *entry = list; entry; entry = entry->ifa_next) {
        /* glibc makes one entry per link, carrying its stats in ifa_data, with an AF_PACKET
         * address; a link without a hardware address (tun) gets a NULL ifa_addr instead.
         * Address entries (AF_INET, AF_INET6) never carry ifa_data. */
        int has_ll = entry->ifa_addr && entry->ifa_addr->sa_family == AF_PACKET;
        if (!has_ll && (entry->ifa_addr || !entry->ifa_data)) continue;
        err = ifm_reserve((void **)&out->items, &out->capacity, out->count + 1, sizeof(ifm_link));
        if (err < 0) break;
        ifm_link *link = &out->items[out->count++];
        memset(link, 0, sizeof *link);
        ifm_copy_name(link->name, sizeof link->name, entry->ifa_name);
        link->flags = entry->ifa_flags;
        link->family = AF_UNSPEC;
        link->operstate = 0; /* IF_OPER_UNKNOWN: getifaddrs does not say */
        if (has_ll) {
            const struct sockaddr_ll *ll = (const struct sockaddr_ll *)entry->ifa_addr;
            link->ifindex = ll->sll_ifindex;
            link->arptype = ll->sll_hatype;
            link->addr_len = ll->sll_halen <= sizeof ll->sll_addr ? ll->sll_halen : sizeof ll->sll_addr;
            memcpy(link->addr, ll->sll_addr, link->addr_len);
        } else {
            link->ifindex = (int32_t)if_nametoindex(entry->ifa_name); /* 0 if it just vanished */
            link->arptype = 0xFFFF; /* ARPHRD_VOID: the type is not known */
        }
        const struct rtnl_link_stats *stats = entry->ifa_data;
        if (stats) {
            link->has_stats = 1;
            link->stats_are_32bit = 1;
            link->counters = IFM_COUNTERS_FROM(stats);
        }
    }
    freeifaddrs(list);
    return err < 0 ? err : (int)out->count;
}

const char *ifm_errno_name(int errnum) { return strerrorname_np(errnum); }
