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

/* app_counts' key. `pad` is always 0: the hash compares every byte of the key. */
struct ifmeter_apps_key {
    __u64 cgroup_id; /* bpf_skb_cgroup_id: the inode number of the socket's cgroup (v2) */
    __u32 ifindex;   /* skb->ifindex at egress, skb->ingress_ifindex at ingress */
    __u32 pad;
};

/* The value of all three maps. Bytes are skb->len: the IP packet, no link-layer header. */
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

#endif
