/* The map layouts the BPF program (bpf/app_counters.bpf.c) and its loader share. Only
 * fixed-width types: the program is compiled for the BPF target, the loader for the host, and
 * both must see the same bytes. */
#ifndef IFMETER_APP_COUNTERS_LAYOUT_H
#define IFMETER_APP_COUNTERS_LAYOUT_H

#include <linux/types.h>

/* app_counts' size unless the loader says otherwise: entries are 32 + 16 bytes of data. */
#define IFMETER_APPS_DEFAULT_ENTRIES 65536
/* app_overflow is keyed by ifindex alone: a few thousand interfaces. */
#define IFMETER_APPS_OVERFLOW_ENTRIES 4096

/* Where a packet's far ends are (IfMeterCore's TrafficScope has the same raw values). */
#define IFMETER_SCOPE_LOCAL 0
#define IFMETER_SCOPE_INTERNET 1
#define IFMETER_SCOPE_UNKNOWN 2

/* app_counts' key: one entry a cgroup, interface and scope. */
struct ifmeter_apps_key {
    __u64 cgroup_id; /* bpf_skb_cgroup_id: the inode number of the socket's cgroup (v2) */
    __u32 ifindex;   /* skb->ifindex at egress, skb->ingress_ifindex at ingress */
    __u32 scope;     /* IFMETER_SCOPE_* */
};

/* local_prefixes' key (an LPM trie): IPv4 as IPv6 maps it (::ffff:a.b.c.d, prefixlen 96 + n),
 * so one trie holds both families. The value is a __u8, 1. */
struct ifmeter_prefix_key {
    __u32 prefixlen;
    __u8 addr[16];
};

/* local_prefixes' size: far more than a host's links and routes and a config's ranges. */
#define IFMETER_PREFIX_ENTRIES 16384

/* link_scopes' key: one entry an interface and scope, counted by the tcx programs. */
struct ifmeter_scope_key {
    __u32 ifindex; /* skb->ifindex: the interface the tcx program is attached to */
    __u32 scope;   /* IFMETER_SCOPE_* */
};

/* link_scopes' size: an interface has three entries. */
#define IFMETER_SCOPE_ENTRIES 12288

/* The kernel's tcx attach types and return value (Linux 6.6), which the C library's headers of
 * an older distribution do not name yet. The values are the kernel's ABI. */
#define IFMETER_BPF_TCX_INGRESS 46
#define IFMETER_BPF_TCX_EGRESS 47
#define IFMETER_TCX_NEXT (-1)

/* The value of every counting map. Bytes are skb->len: at the cgroup hooks the IP packet, no
 * link-layer header; at tcx the frame, its link-layer header included (both directions). */
struct ifmeter_apps_value {
    __u64 rx_bytes;
    __u64 rx_packets;
    __u64 tx_bytes;
    __u64 tx_packets;
    /* app_counts only: the id of the socket's cgroup's ancestor at IFMETER_APPS_ANCESTOR_LEVEL
     * (0 when the cgroup is shallower), set when the entry is made. A user can remove their own
     * cgroup before the daemon reads its name while a socket made in it goes on sending; the
     * ancestor (`user-UID.slice`, which only root makes) still names whose traffic it is. */
    __u64 ancestor_id;
};

/* /user.slice/user-UID.slice is level 2 (the root is 0). */
#define IFMETER_APPS_ANCESTOR_LEVEL 2

/* What the loader tells the program before it is loaded: its only read-only data (.rodata),
 * so it sits at offset 0 there. `netns_cookie` non-zero: only packets of that network
 * namespace are counted (the daemon's own, where its links are); 0 counts every namespace. */
struct ifmeter_apps_config {
    __u64 netns_cookie;
};

_Static_assert(sizeof(struct ifmeter_apps_config) == 8, "the config is 8 bytes on both targets");
_Static_assert(sizeof(struct ifmeter_apps_key) == 16, "the key is 16 bytes on both targets");
_Static_assert(sizeof(struct ifmeter_apps_value) == 40, "the value is 40 bytes on both targets");
_Static_assert(sizeof(struct ifmeter_prefix_key) == 20, "the prefix key is 20 bytes on both targets");
_Static_assert(sizeof(struct ifmeter_scope_key) == 8, "the scope key is 8 bytes on both targets");
_Static_assert(IFMETER_SCOPE_UNKNOWN == 2, "TrafficScope.unknown's raw value");

#endif
