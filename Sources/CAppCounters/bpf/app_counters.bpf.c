/* The application counter: cgroup skb programs that count each packet's bytes by the cgroup of
 * the socket it belongs to and the interface it crosses (docs/APPS.md, "The BPF program").
 *
 * Compiled for the BPF target at build time (Plugins/AppCountersObject) and embedded in
 * IfMeterKernel; never compiled for the host (Package.swift excludes this directory from
 * CAppCounters). include/app_counters_layout.h holds the layouts the loader shares with it. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "../include/app_counters_layout.h"

/* Set by the loader before load (ifmeter_apps_attach). */
const volatile struct ifmeter_apps_config ifmeter_apps_config = {};

/* Not LRU: a full map must never push out an application's counters to make room for
 * another's; what does not fit goes to app_overflow instead. max_entries is the loader's
 * (ifmeter_apps_attach), set before load; this is only its default. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, IFMETER_APPS_DEFAULT_ENTRIES);
    __type(key, struct ifmeter_apps_key);
    __type(value, struct ifmeter_apps_value);
} app_counts SEC(".maps");

/* Traffic of cgroups that found app_counts full, by interface: counted, never attributed. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, IFMETER_APPS_OVERFLOW_ENTRIES);
    __type(key, __u32);
    __type(value, struct ifmeter_apps_value);
} app_overflow SEC(".maps");

/* What neither map had room for: one total, so no byte passes uncounted. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct ifmeter_apps_value);
} app_lost SEC(".maps");

/* Atomic adds, not a per-CPU map: memory stays one value an entry whatever the CPU count, and
 * two CPUs counting the same entry at once lose nothing. */
static __always_inline void add(struct ifmeter_apps_value *value, __u64 bytes, int egress) {
    if (egress) {
        __sync_fetch_and_add(&value->tx_bytes, bytes);
        __sync_fetch_and_add(&value->tx_packets, 1);
    } else {
        __sync_fetch_and_add(&value->rx_bytes, bytes);
        __sync_fetch_and_add(&value->rx_packets, 1);
    }
}

/* Adds the packet to `key`'s entry in `map`, creating it if needed (with `ancestor`). 0, or -1
 * when the map had no room (or the entry could not be made and found). */
static __always_inline int count_in(void *map, const void *key, __u64 bytes, int egress, __u64 ancestor) {
    struct ifmeter_apps_value *value = bpf_map_lookup_elem(map, key);
    if (!value) {
        struct ifmeter_apps_value zero = {.ancestor_id = ancestor};
        /* BPF_NOEXIST: another CPU may have made the entry since the lookup; then it is there
         * to add to, and the second lookup finds it. */
        bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);
        value = bpf_map_lookup_elem(map, key);
        if (!value) return -1;
    }
    add(value, bytes, egress);
    return 0;
}

static __always_inline int count(struct __sk_buff *skb, int egress) {
    /* Another namespace's ifindex names another link: its packets are not the daemon's
     * links' traffic, and would be counted to whichever of its links has that number. */
    __u64 only = ifmeter_apps_config.netns_cookie;
    if (only != 0 && bpf_get_netns_cookie(skb) != only) return 1;
    struct ifmeter_apps_key key = {
        .cgroup_id = bpf_skb_cgroup_id(skb),
        .ifindex = egress ? skb->ifindex : skb->ingress_ifindex,
        .pad = 0,
    };
    __u64 bytes = skb->len; /* the IP packet: the link layer's header is not in it */
    /* Looked up only for a new entry: most packets find theirs. */
    struct ifmeter_apps_value *value = bpf_map_lookup_elem(&app_counts, &key);
    if (value) {
        add(value, bytes, egress);
        return 1;
    }
    __u64 ancestor = bpf_skb_ancestor_cgroup_id(skb, IFMETER_APPS_ANCESTOR_LEVEL);
    if (count_in(&app_counts, &key, bytes, egress, ancestor) == 0) return 1;
    __u32 ifindex = key.ifindex;
    if (count_in(&app_overflow, &ifindex, bytes, egress, 0) == 0) return 1;
    __u32 zero = 0;
    struct ifmeter_apps_value *lost = bpf_map_lookup_elem(&app_lost, &zero);
    if (lost) add(lost, bytes, egress);
    return 1; /* every path allows the packet: a counter never drops traffic */
}

SEC("cgroup_skb/ingress")
int ifmeter_apps_ingress(struct __sk_buff *skb) { return count(skb, 0); }

SEC("cgroup_skb/egress")
int ifmeter_apps_egress(struct __sk_buff *skb) { return count(skb, 1); }

char LICENSE[] SEC("license") = "GPL";
