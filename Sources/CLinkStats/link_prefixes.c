/* CLinkStats: the facts the on-link prefixes come from (docs/SCOPES.md): every address, every
 * route, parsed by libnl-route message by message; and a socket that hears them change. Which
 * of them make a prefix local is decided in Swift (IfMeterKernel's OnLinkPrefixes). */
#include "CLinkStats.h"
#include "link_shared.h"

#include <errno.h>
#include <limits.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <netlink/route/addr.h>
#include <netlink/route/route.h>

void ifm_prefix_array_free(ifm_prefix_array *array) {
    free(array->items);
    array->items = NULL;
    array->count = array->capacity = 0;
}

/* Copies an address of `family` into 16 bytes: 4 for IPv4, 16 for IPv6. 0, or -1 when it is
 * not of that family's length. */
static int ifm_copy_address(struct nl_addr *addr, uint8_t family, uint8_t out[16]) {
    if (!addr) return -1;
    unsigned int length = nl_addr_get_len(addr);
    if ((family == AF_INET && length != 4) || (family == AF_INET6 && length != 16)) return -1;
    memcpy(out, nl_addr_get_binary_addr(addr), length);
    return 0;
}

struct ifm_prefix_parse {
    ifm_prefix_record *record;
    int parsed;
};

static void ifm_fill_address(struct rtnl_addr *addr, ifm_prefix_record *record) {
    record->kind = IFM_PREFIX_ADDRESS;
    record->family = (uint8_t)rtnl_addr_get_family(addr);
    record->ifindex = rtnl_addr_get_ifindex(addr);
    record->length = (uint8_t)rtnl_addr_get_prefixlen(addr);
    if (ifm_copy_address(rtnl_addr_get_local(addr), record->family, record->address) != 0) return;
    struct nl_addr *peer = rtnl_addr_get_peer(addr);
    /* A point-to-point address: IFA_ADDRESS is the far end, IFA_LOCAL this host's. */
    if (peer && ifm_copy_address(peer, record->family, record->peer) == 0 &&
        memcmp(record->peer, record->address, 16) != 0)
        record->has_peer = 1;
    record->valid = 1;
}

static void ifm_fill_route(struct rtnl_route *route, ifm_prefix_record *record) {
    record->kind = IFM_PREFIX_ROUTE;
    record->family = rtnl_route_get_family(route);
    record->table = rtnl_route_get_table(route);
    record->type = rtnl_route_get_type(route);
    struct nl_addr *dst = rtnl_route_get_dst(route);
    record->length = dst ? (uint8_t)nl_addr_get_prefixlen(dst) : 0;
    /* A default route has no destination attribute: all zeros, length 0. */
    if (dst && nl_addr_get_len(dst) > 0 && ifm_copy_address(dst, record->family, record->address) != 0) return;
    int hops = rtnl_route_get_nnexthops(route);
    for (int i = 0; i < hops; i++) {
        struct rtnl_nexthop *hop = rtnl_route_nexthop_n(route, i);
        if (!hop) continue;
        if (rtnl_route_nh_get_gateway(hop) || rtnl_route_nh_get_via(hop)) record->has_gateway = 1;
        if (record->ifindex == 0) record->ifindex = rtnl_route_nh_get_ifindex(hop);
    }
    record->valid = 1;
}

static void ifm_fill_prefix(struct nl_object *object, void *context) {
    struct ifm_prefix_parse *result = context;
    const char *type = nl_object_get_type(object);
    if (!type) return;
    if (strcmp(type, "route/addr") == 0) ifm_fill_address((struct rtnl_addr *)object, result->record);
    else if (strcmp(type, "route/route") == 0) ifm_fill_route((struct rtnl_route *)object, result->record);
    result->parsed = result->record->valid;
}

/* One RTM_NEWADDR or RTM_NEWROUTE message through libnl-route's parser. */
static int ifm_parse_prefix_message(struct nlmsghdr *hdr, ifm_prefix_record *record) {
    memset(record, 0, sizeof *record);
    struct nl_msg *msg = nlmsg_convert(hdr);
    if (!msg) return -ENOMEM;
    nlmsg_set_proto(msg, NETLINK_ROUTE);
    struct ifm_prefix_parse result = { .record = record, .parsed = 0 };
    int err = nl_msg_parse(msg, ifm_fill_prefix, &result);
    nlmsg_free(msg);
    if (err == 0 && !result.parsed) return -EPROTO;
    if (record->family != AF_INET && record->family != AF_INET6) return -EPROTO;
    return err < 0 ? -ifm_errno_from_nle(err) : 0;
}

static int ifm_on_prefix(struct nlmsghdr *hdr, void *context) {
    ifm_prefix_array *out = context;
    if (hdr->nlmsg_type != RTM_NEWADDR && hdr->nlmsg_type != RTM_NEWROUTE) return 0;
    int err = ifm_reserve((void **)&out->items, &out->capacity, out->count + 1, sizeof(ifm_prefix_record));
    if (err < 0) return err;
    err = ifm_parse_prefix_message(hdr, &out->items[out->count]);
    if (err == -ENOMEM) return err;
    if (err < 0) out->skipped++;
    else out->count++;
    return 0;
}

int ifm_parse_prefixes(const void *buf, size_t len, ifm_prefix_array *out) {
    int remaining = len > INT_MAX ? INT_MAX : (int)len;
    for (struct nlmsghdr *hdr = (struct nlmsghdr *)buf; nlmsg_ok(hdr, remaining); hdr = nlmsg_next(hdr, &remaining)) {
        int err = ifm_on_prefix(hdr, out);
        if (err < 0) return err;
    }
    return 0;
}

/* One dump of `type` (RTM_GETADDR, RTM_GETROUTE) for both families, appended to `out`. */
static int ifm_dump_prefixes_of(ifm_nl *nl, int type, ifm_prefix_array *out) {
    struct nl_msg *request = nlmsg_alloc_simple(type, NLM_F_DUMP);
    if (!request) return -ENOMEM;
    struct rtmsg rtm = { .rtm_family = AF_UNSPEC };
    struct ifaddrmsg ifa = { .ifa_family = AF_UNSPEC };
    int err = type == RTM_GETROUTE ? nlmsg_append(request, &rtm, sizeof rtm, NLMSG_ALIGNTO)
                                   : nlmsg_append(request, &ifa, sizeof ifa, NLMSG_ALIGNTO);
    size_t start = out->count, skipped = out->skipped;
    if (err == 0) {
        /* A part of its own: ifm_dump empties the count it is given before each attempt. */
        ifm_prefix_array part = { 0 };
        err = ifm_dump(nl, request, ifm_on_prefix, &part, &part.count);
        size_t added = part.count;
        if (err == 0 && ifm_reserve((void **)&out->items, &out->capacity, start + added, sizeof(ifm_prefix_record)) == 0) {
            if (added) memcpy(out->items + start, part.items, added * sizeof(ifm_prefix_record));
            out->count = start + added;
            out->skipped = skipped + part.skipped;
        } else if (err == 0) {
            err = -ENOMEM;
        }
        ifm_prefix_array_free(&part);
    } else {
        err = -ifm_errno_from_nle(err);
    }
    nlmsg_free(request);
    return err;
}

int ifm_nl_dump_prefixes(ifm_nl *nl, ifm_prefix_array *out) {
    out->count = 0;
    out->skipped = 0;
    int err = ifm_dump_prefixes_of(nl, RTM_GETADDR, out);
    if (err == 0) err = ifm_dump_prefixes_of(nl, RTM_GETROUTE, out);
    return err < 0 ? err : (int)out->count;
}

int ifm_nl_open_prefix_events(ifm_nl **out) {
    *out = NULL;
    int err = ifm_nl_open(out);
    if (err < 0) return err;
    static const int groups[] = { RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE };
    for (size_t i = 0; err == 0 && i < sizeof groups / sizeof groups[0]; i++) {
        int nle = nl_socket_add_membership((*out)->sock, groups[i]);
        if (nle < 0) err = -ifm_errno_from_nle(nle);
    }
    if (err == 0) {
        int nle = nl_socket_set_nonblocking((*out)->sock);
        if (nle < 0) err = -ifm_errno_from_nle(nle);
    }
    if (err < 0) {
        ifm_nl_close(*out);
        *out = NULL;
    }
    return err;
}

int ifm_nl_drain(ifm_nl *nl) {
    int fd = nl_socket_get_fd(nl->sock);
    int count = 0, lost = 0;
    for (;;) {
        ssize_t n = recv(fd, nl->buf, nl->buf_size, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == ENOBUFS) {
            lost = 1;
            continue;
        }
        if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? (lost ? -ENOBUFS : count) : -errno;
        count++;
    }
}
