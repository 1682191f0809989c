/*
 * CLinkStats: the kernel side of ifmeter, in C because libnl is C.
 *
 * Plain structs out, integer returns in (0 or a positive count on success, -errno on failure),
 * no policy: which links matter, what a reset is and what to do on overflow are decided in Swift.
 * Every symbol is prefixed `ifm_`.
 */
#ifndef IFMETER_CLINKSTATS_H
#define IFMETER_CLINKSTATS_H

#include <stddef.h>
#include <stdint.h>

#define IFM_NAME_SIZE 16   /* IFNAMSIZ */
#define IFM_KIND_SIZE 32   /* longest IFLA_INFO_KIND in the kernel is well below this */
#define IFM_ADDR_SIZE 32   /* MAX_ADDR_LEN */

/* Counters as the kernel's struct rtnl_link_stats64 has them (a subset). */
typedef struct ifm_counters {
    uint64_t rx_bytes;
    uint64_t tx_bytes;
    uint64_t rx_packets;
    uint64_t tx_packets;
    uint64_t rx_errors;
    uint64_t tx_errors;
    uint64_t rx_dropped;
    uint64_t tx_dropped;
} ifm_counters;

/* One RTM_NEWLINK / RTM_DELLINK message, or one getifaddrs AF_PACKET entry. */
typedef struct ifm_link {
    int32_t ifindex;
    uint32_t flags;        /* IFF_* */
    uint32_t mtu;
    int32_t master;        /* IFLA_MASTER, 0 if none */
    int32_t link;          /* IFLA_LINK, 0 if none */
    int32_t link_netnsid;  /* IFLA_LINK_NETNSID: the nsid, in this namespace, of the namespace
                              `link` is in (a veth's peer moved away); -1 if none */
    uint16_t arptype;      /* ARPHRD_* */
    uint8_t family;        /* ifi_family: AF_UNSPEC for the link itself, AF_BRIDGE for port info */
    uint8_t operstate;     /* IF_OPER_* */
    uint8_t has_stats;     /* 1 if the message carried counters */
    uint8_t stats_are_32bit; /* 1 if they came from struct rtnl_link_stats (they wrap at 2^32) */
    uint8_t addr_len;
    uint8_t addr[IFM_ADDR_SIZE];
    char name[IFM_NAME_SIZE];
    char kind[IFM_KIND_SIZE]; /* IFLA_INFO_KIND, "" if the driver reports none */
    ifm_counters counters;
} ifm_link;

/* One row of a counters-only dump. */
typedef struct ifm_link_counters {
    int32_t ifindex;
    uint32_t reserved;
    ifm_counters counters;
} ifm_link_counters;

enum {
    IFM_EVENT_NEW_LINK = 1, /* RTM_NEWLINK: a link appeared or changed */
    IFM_EVENT_DEL_LINK = 2, /* RTM_DELLINK: carries the link's final counters */
    IFM_EVENT_DEL_NSID = 3, /* RTM_DELNSID: `nsid` no longer names a namespace; `link` is zeroed */
    /* A peers socket's copy of a link message of its own namespace, where it fell among the
     * others' deletions: only `link.ifindex` and `link.flags` are set. */
    IFM_EVENT_OWN_NEW_MARK = 4,
    IFM_EVENT_OWN_DEL_MARK = 5,
};

typedef struct ifm_link_event {
    int32_t type; /* IFM_EVENT_* */
    /* The nsid of the namespace the link is in, for a socket that listens to every namespace
     * with an nsid here (a peers socket, ifm_nl_open_events); -1 for the socket's own namespace. */
    int32_t source_nsid;
    /* IFM_EVENT_DEL_NSID: the nsid the namespace of the message (source_nsid) stopped giving to
     * a namespace that was destroyed; the kernel may give it to the next one. -1 otherwise. */
    int32_t nsid;
    ifm_link link;
} ifm_link_event;

/* Growable arrays owned by the caller and reused across calls: filling one empties it first.
 * Never truncated: they grow until the kernel's answer fits (or allocation fails: -ENOMEM). */
typedef struct ifm_link_array {
    ifm_link *items;
    size_t count;
    size_t capacity;
    /* Messages libnl could not parse, left out of `items` (never a failed dump). */
    size_t skipped;
} ifm_link_array;

typedef struct ifm_counters_array {
    ifm_link_counters *items;
    size_t count;
    size_t capacity;
} ifm_counters_array;

typedef struct ifm_event_array {
    ifm_link_event *items;
    size_t count;
    size_t capacity;
    /* Messages libnl could not parse, left out of `items`; they count as lost events. */
    size_t skipped;
} ifm_event_array;

void ifm_link_array_free(ifm_link_array *array);
void ifm_counters_array_free(ifm_counters_array *array);
void ifm_event_array_free(ifm_event_array *array);

/* A NETLINK_ROUTE socket in the network namespace of the calling thread. */
typedef struct ifm_nl ifm_nl;

/* Opens a socket for dumps and requests, connected to the kernel. */
int ifm_nl_open(ifm_nl **out);
/* Opens an event socket: non-blocking, joined to RTNLGRP_LINK, with a large receive buffer, and
 * connected to the kernel, so no other process can queue a unicast datagram on it.
 * - `peers` == 0: this namespace's link events, and the nsids it deletes (RTNLGRP_NSID).
 * - `peers` != 0: the link deletions of every namespace this one has an nsid for
 *   (NETLINK_LISTEN_ALL_NSID; needs CAP_NET_BROADCAST), each marked with that nsid in
 *   ifm_link_event.source_nsid. The peer end of a container's veth reports its own counters
 *   there when it is deleted. Everything else is dropped unparsed as it is read: what the
 *   tenants of those namespaces churn or multicast costs a recvmsg each, and if they overflow
 *   this socket, the own socket loses nothing.
 * 0 or -errno (-EPERM for a peers socket without the capability). */
int ifm_nl_open_events(ifm_nl **out, int peers);
/* Takes over an event socket someone else created and bound (systemd's ListenNetlink=, which can
 * give it a receive buffer past net.core.rmem_max that an unprivileged process cannot), as
 * ifm_nl_open_events makes one of kind `peers`, and discards what was queued before. Closed by
 * ifm_nl_close. */
int ifm_nl_adopt_events(int fd, int peers, ifm_nl **out);
void ifm_nl_close(ifm_nl *nl);

/* The descriptor to poll for readability (event sockets). */
int ifm_nl_fd(const ifm_nl *nl);
/* The bytes its receive queue holds now (SO_MEMINFO's rmem_alloc: datagrams at their truesize),
 * or -errno. */
int ifm_nl_queued_bytes(const ifm_nl *nl);
/* The receive buffer the kernel granted, in bytes (event sockets size it up at open). */
int ifm_nl_rcvbuf(const ifm_nl *nl);

/* Full RTM_GETLINK dump, every message parsed by libnl-route. Returns the link count; a
 * message libnl refuses is counted in out->skipped and left out, never a failed dump. */
int ifm_nl_dump_links(ifm_nl *nl, ifm_link_array *out);

/* One link by its index (RTM_GETLINK, no dump): 0 with *out filled, -ENODEV when the kernel has
 * no such link, or -errno. */
int ifm_nl_get_link(ifm_nl *nl, int32_t ifindex, ifm_link *out);

/* Counters-only RTM_GETSTATS dump (IFLA_STATS_LINK_64), keyed by ifindex. Returns the count. */
int ifm_nl_dump_counters(ifm_nl *nl, ifm_counters_array *out);

/* Reads every link event queued on an event socket without blocking and appends it to `out`.
 * Returns the number appended; 0 when nothing was queued. Returns -ENOBUFS when events were
 * lost — the kernel dropped some (the socket overflowed), a read failed, or a message could
 * not be parsed (out->skipped) —: what was read is still appended, and the caller must
 * resynchronise with a full dump. */
int ifm_nl_read_events(ifm_nl *nl, ifm_event_array *out);
/* ifm_nl_read_events, without its budget, until the datagrams read account for `bytes` of the
 * receive queue (ifm_nl_queued_bytes, taken earlier) or it is empty: everything queued when
 * `bytes` was taken is read, however many small datagrams a flood put in front of it. */
int ifm_nl_read_events_through(ifm_nl *nl, ifm_event_array *out, size_t bytes);

/* Parses the RTM_NEWLINK / RTM_DELLINK / RTM_DELNSID messages in `len` bytes as they came off
 * an event socket from the namespace `source_nsid` (-1: the socket's own), appending to `out`
 * (unparseable ones counted in out->skipped). With `deletions_only` (a peers socket), only
 * RTM_DELLINK is kept from other namespaces, and the own namespace's (`source_nsid` -1) link
 * messages become IFM_EVENT_OWN_*_MARK.
 * Any bytes are safe: this is the fuzzing entry to the parser ifm_nl_read_events uses. Returns
 * 0 or -ENOMEM. */
int ifm_parse_link_events(const void *buf, size_t len, int32_t source_nsid, int deletions_only,
                          ifm_event_array *out);

/* Parses the RTM_NEWSTATS messages in `len` bytes, appending to `out`; any bytes are safe.
 * Returns 0, -EPROTO for a malformed attribute table, or -ENOMEM. */
int ifm_parse_counters(const void *buf, size_t len, ifm_counters_array *out);

/* The nsid this socket's namespace gives the network namespace `netns_fd` refers to
 * (RTM_GETNSID with NETNSA_FD; the kernel assigns none by asking). Returns the nsid (>= 0),
 * -ENOENT when that namespace has no nsid here, or -errno. Opening a namespace file and asking
 * need no privilege. */
int ifm_nl_netns_id(ifm_nl *nl, int netns_fd);

/* The same for the network namespace of process `pid` (RTM_GETNSID with NETNSA_PID): no right to
 * trace the process is needed. -ESRCH when there is no such process. */
int ifm_nl_netns_id_of_pid(ifm_nl *nl, int32_t pid);

/* Moves the calling thread into the network namespace `netns_fd` refers to (setns; needs
 * CAP_SYS_ADMIN). 0 or -errno. */
int ifm_enter_netns(int netns_fd);

/* Reads the nsid from the reply to RTM_GETNSID request `seq` in `len` bytes; any bytes are safe
 * (the fuzzing entry to the parser ifm_nl_netns_id uses). Returns the nsid, -ENOENT when none is
 * assigned, -EAGAIN when the bytes hold no reply to `seq`, or -errno from the kernel's error. */
int ifm_parse_netns_id(const void *buf, size_t len, uint32_t seq);

/* An address or a route, as much as the on-link prefixes need (docs/SCOPES.md). */
enum { IFM_PREFIX_ADDRESS = 1, IFM_PREFIX_ROUTE = 2 };
typedef struct ifm_prefix_record {
    uint8_t kind;        /* IFM_PREFIX_* */
    uint8_t family;      /* AF_INET or AF_INET6 */
    uint8_t length;      /* the prefix length: the address's, or the route destination's */
    uint8_t has_peer;    /* an address: a point-to-point peer in `peer` */
    uint8_t has_gateway; /* a route: a next hop has a gateway (RTA_GATEWAY or RTA_VIA) */
    uint8_t type;        /* a route: RTN_* */
    uint8_t valid;
    uint8_t reserved;
    int32_t ifindex;     /* the address's link; a route's first next hop's */
    uint32_t table;      /* a route: RT_TABLE_* */
    uint8_t address[16]; /* the local address, or the route's destination (4 bytes for IPv4) */
    uint8_t peer[16];
} ifm_prefix_record;

typedef struct ifm_prefix_array {
    ifm_prefix_record *items;
    size_t count;
    size_t capacity;
    size_t skipped;
} ifm_prefix_array;

void ifm_prefix_array_free(ifm_prefix_array *array);

/* Every address and route of the socket's namespace (RTM_GETADDR and RTM_GETROUTE dumps, both
 * families), each message parsed by libnl-route. The count; unparseable ones in out->skipped. */
int ifm_nl_dump_prefixes(ifm_nl *nl, ifm_prefix_array *out);

/* Parses the RTM_NEWADDR / RTM_NEWROUTE messages in `len` bytes into `out`: any bytes are safe
 * (the fuzzing entry to the parser ifm_nl_dump_prefixes uses). 0 or -ENOMEM. */
int ifm_parse_prefixes(const void *buf, size_t len, ifm_prefix_array *out);

/* A socket joined to RTNLGRP_IPV4_IFADDR, IPV6_IFADDR, IPV4_ROUTE and IPV6_ROUTE, non-blocking,
 * connected to the kernel. Only that something changed is read from it (ifm_nl_drain). */
int ifm_nl_open_prefix_events(ifm_nl **out);
/* Reads and drops every queued datagram: how many, or -ENOBUFS when some were lost (either
 * way, the caller reads everything again), or -errno. */
int ifm_nl_drain(ifm_nl *nl);

/* The fallback source: getifaddrs() AF_PACKET entries, 32-bit struct rtnl_link_stats counters.
 * Returns the link count. No kind, operstate, MTU, master or link are available from it. */
int ifm_getifaddrs_links(ifm_link_array *out);

/* The symbolic name of an errno value ("EPERM"), or NULL if the C library has none. */
const char *ifm_errno_name(int errnum);

#endif
