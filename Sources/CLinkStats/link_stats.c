/* CLinkStats: link and counters messages parsed by libnl, from dumps and from the event socket. */
#include "CLinkStats.h"
#include "link_shared.h"

#include <errno.h>
#include <limits.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
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

void ifm_copy_name(char *dest, size_t size, const char *source) {
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
    if (rtnl_link_get_link_netnsid(source, &link->link_netnsid) != 0) link->link_netnsid = -1;
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
        /* The message's own family, not libnl's: libnl files a bridge's AF_UNSPEC message under
         * AF_BRIDGE, which would make a new bridge (podman0) look like a port notification. */
        if (hdr->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg)))
            link->family = ((const struct ifinfomsg *)nlmsg_data(hdr))->ifi_family;
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

/* The reply to RTM_GETLINK request `seq` in `len` bytes: 0 with *out filled, -ENODEV when the
 * kernel has no such link, -EAGAIN when the bytes hold no reply to `seq`, or -errno. */
static int ifm_parse_link_reply(const void *buf, size_t len, uint32_t seq, void *context) {
    ifm_link *out = context;
    int remaining = len > INT_MAX ? INT_MAX : (int)len;
    for (struct nlmsghdr *hdr = (struct nlmsghdr *)buf; nlmsg_ok(hdr, remaining);
         hdr = nlmsg_next(hdr, &remaining)) {
        if (hdr->nlmsg_seq != seq) continue;
        if (hdr->nlmsg_type == NLMSG_ERROR) return ifm_nlmsg_error(hdr);
        if (hdr->nlmsg_type == RTM_NEWLINK) return ifm_parse_link_message(hdr, out);
    }
    return -EAGAIN;
}

int ifm_nl_get_link(ifm_nl *nl, int32_t ifindex, ifm_link *out) {
    struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
    struct nl_msg *request = nlmsg_alloc_simple(RTM_GETLINK, NLM_F_REQUEST);
    if (!request) return -ENOMEM;
    int err = nlmsg_append(request, &ifi, sizeof ifi, NLMSG_ALIGNTO);
    if (err < 0) {
        nlmsg_free(request);
        return -ifm_errno_from_nle(err);
    }
    return ifm_request_reply(nl, request, ifm_parse_link_reply, out);
}

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

int ifm_parse_link_events(const void *buf, size_t len, int32_t source_nsid, int deletions_only,
                          ifm_event_array *out) {
    int remaining = len > INT_MAX ? INT_MAX : (int)len;
    for (const struct nlmsghdr *hdr = buf; nlmsg_ok(hdr, remaining);
         hdr = nlmsg_next((struct nlmsghdr *)hdr, &remaining)) {
        int type = hdr->nlmsg_type;
        if (type != RTM_NEWLINK && type != RTM_DELLINK && type != RTM_DELNSID) continue;
        if (deletions_only && source_nsid < 0) {
            /* A peers socket's copy of its own namespace's link message: only where it falls
             * among the other namespaces' deletions matters, so its header is all that is read. */
            if (type == RTM_DELNSID) continue;
            if (hdr->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
                out->skipped++;
                continue;
            }
            const struct ifinfomsg *ifi = NLMSG_DATA(hdr);
            if (ifi->ifi_family != AF_UNSPEC) continue;
            int err = ifm_reserve((void **)&out->items, &out->capacity, out->count + 1, sizeof(ifm_link_event));
            if (err < 0) return err;
            ifm_link_event *mark = &out->items[out->count++];
            memset(mark, 0, sizeof *mark);
            mark->type = type == RTM_DELLINK ? IFM_EVENT_OWN_DEL_MARK : IFM_EVENT_OWN_NEW_MARK;
            mark->source_nsid = -1;
            mark->nsid = -1;
            mark->link.ifindex = ifi->ifi_index;
            mark->link.flags = ifi->ifi_flags;
            continue;
        }
        if (deletions_only && type != RTM_DELLINK) continue;
        int err = ifm_reserve((void **)&out->items, &out->capacity, out->count + 1,
                              sizeof(ifm_link_event));
        if (err < 0) return err;
        ifm_link_event *event = &out->items[out->count];
        event->source_nsid = source_nsid;
        event->nsid = -1;
        if (type == RTM_DELNSID) {
            event->type = IFM_EVENT_DEL_NSID;
            memset(&event->link, 0, sizeof event->link);
            err = ifm_nsid_of_message((struct nlmsghdr *)hdr, &event->nsid);
        } else {
            event->type = type == RTM_DELLINK ? IFM_EVENT_DEL_LINK : IFM_EVENT_NEW_LINK;
            err = ifm_parse_link_message((struct nlmsghdr *)hdr, &event->link);
        }
        if (err == -ENOMEM) return err;
        if (err < 0) out->skipped++;
        else out->count++;
    }
    return 0;
}

/* Reads until the socket is empty, or `batches` datagrams were read (batches > 0), or (batches
 * == 0) the datagrams read account for `through_bytes` of the receive queue. */
static int ifm_read_events(ifm_nl *nl, ifm_event_array *out, int batches, size_t through_bytes) {
    size_t before = out->count;
    size_t skipped = out->skipped;
    size_t consumed = 0;
    int lost = 0;
    for (int batch = 0; batches == 0 ? consumed < through_bytes : batch < batches; batch++) {
        int32_t source_nsid = -1;
        ssize_t n = ifm_recv_from(nl, MSG_DONTWAIT, &source_nsid);
        if (n == -EAGAIN || n == -EWOULDBLOCK) break;
        consumed += nl->last_datagram + IFM_SKB_OVERHEAD_MIN;
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
        int err = ifm_parse_link_events(nl->buf, (size_t)n, source_nsid, nl->peers_only, out);
        if (err < 0) return err;
    }
    if (out->skipped != skipped) lost = 1;
    return lost ? -ENOBUFS : (int)(out->count - before);
}

int ifm_nl_read_events(ifm_nl *nl, ifm_event_array *out) {
    return ifm_read_events(nl, out, IFM_EVENT_BATCHES_PER_READ, 0);
}

int ifm_nl_read_events_through(ifm_nl *nl, ifm_event_array *out, size_t bytes) {
    return bytes == 0 ? 0 : ifm_read_events(nl, out, 0, bytes);
}
