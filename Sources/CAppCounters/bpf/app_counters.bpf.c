/* The application counter: cgroup skb programs that count each packet's bytes by the cgroup of
 * the socket it belongs to, the interface it crosses and its scope (docs/APPS.md, "The BPF
 * program"); and tcx programs that count an interface's frames by scope (docs/SCOPES.md).
 *
 * Compiled for the BPF target at build time (Plugins/AppCountersObject) and embedded in
 * IfMeterKernel; never compiled for the host (Package.swift excludes this directory from
 * CAppCounters). include/app_counters_layout.h holds the layouts the loader shares with it. */
#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
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

/* The prefixes whose addresses are local (docs/SCOPES.md), written by the daemon alone: the
 * built-in ones, the links' on-link prefixes, the config's local_prefixes. */
struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(max_entries, IFMETER_PREFIX_ENTRIES);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct ifmeter_prefix_key);
    __type(value, __u8);
} local_prefixes SEC(".maps");

/* Entry 0 is 1 once the daemon wrote local_prefixes whole: before that, an empty trie would
 * call everything internet, so every packet is unknown instead. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, __u32);
} scope_ready SEC(".maps");

/* Each covered interface's frames by scope. The attach step makes an interface's local and
 * internet entries (zero): an entry there is an interface covered. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, IFMETER_SCOPE_ENTRIES);
    __type(key, struct ifmeter_scope_key);
    __type(value, struct ifmeter_apps_value);
} link_scopes SEC(".maps");

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

/* Whether the 16-byte (IPv6 or mapped IPv4) address `addr` is within a local prefix. */
static __always_inline int is_local(const __u8 *addr) {
    struct ifmeter_prefix_key key = {.prefixlen = 128};
    __builtin_memcpy(key.addr, addr, 16);
    return bpf_map_lookup_elem(&local_prefixes, &key) != NULL;
}

/* The packet's scope, from both its addresses, read at the network header (both program types
 * have bpf_skb_load_bytes_relative): local when both are within local prefixes. */
static __always_inline __u32 classify(struct __sk_buff *skb) {
    __u32 zero = 0;
    __u32 *ready = bpf_map_lookup_elem(&scope_ready, &zero);
    if (!ready || *ready == 0) return IFMETER_SCOPE_UNKNOWN;
    __u16 protocol = bpf_ntohs(skb->protocol);
    /* IP inside a header not read here (a VLAN tag not taken off by the driver, PPPoE): its
     * addresses are not where they are looked for. */
    if (protocol == 0x8100 || protocol == 0x88A8 || protocol == 0x8864) return IFMETER_SCOPE_UNKNOWN;
    /* Not IP (ARP, LLDP, PPPoE discovery): never leaves the link. */
    if (protocol != 0x0800 && protocol != 0x86DD) return IFMETER_SCOPE_LOCAL;
    __u8 version;
    if (bpf_skb_load_bytes_relative(skb, 0, &version, 1, BPF_HDR_START_NET) != 0) return IFMETER_SCOPE_UNKNOWN;
    __u8 source[16] = {}, destination[16] = {};
    if (protocol == 0x0800) {
        __u8 both[8];
        if ((version >> 4) != 4) return IFMETER_SCOPE_UNKNOWN;
        if (bpf_skb_load_bytes_relative(skb, 12, both, 8, BPF_HDR_START_NET) != 0) return IFMETER_SCOPE_UNKNOWN;
        source[10] = source[11] = destination[10] = destination[11] = 0xFF;
        __builtin_memcpy(source + 12, both, 4);
        __builtin_memcpy(destination + 12, both + 4, 4);
    } else {
        __u8 both[32];
        if ((version >> 4) != 6) return IFMETER_SCOPE_UNKNOWN;
        if (bpf_skb_load_bytes_relative(skb, 8, both, 32, BPF_HDR_START_NET) != 0) return IFMETER_SCOPE_UNKNOWN;
        __builtin_memcpy(source, both, 16);
        __builtin_memcpy(destination, both + 16, 16);
    }
    return is_local(source) && is_local(destination) ? IFMETER_SCOPE_LOCAL : IFMETER_SCOPE_INTERNET;
}

static __always_inline int count(struct __sk_buff *skb, int egress) {
    /* Another namespace's ifindex names another link: its packets are not the daemon's
     * links' traffic, and would be counted to whichever of its links has that number. */
    __u64 only = ifmeter_apps_config.netns_cookie;
    if (only != 0 && bpf_get_netns_cookie(skb) != only) return 1;
    struct ifmeter_apps_key key = {
        .cgroup_id = bpf_skb_cgroup_id(skb),
        .ifindex = egress ? skb->ifindex : skb->ingress_ifindex,
        .scope = classify(skb),
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

/* An interface's frames by scope. bytes = skb->len: at tcx the frame with its link-layer
 * header, in both directions (ingress pushes it back before the program runs), as the link's
 * own counters count it. Never drops or changes a packet: TCX_NEXT on every path. */
static __always_inline int count_link(struct __sk_buff *skb, int egress) {
    struct ifmeter_scope_key key = {.ifindex = skb->ifindex, .scope = classify(skb)};
    count_in(&link_scopes, &key, skb->len, egress, 0);
    return IFMETER_TCX_NEXT;
}

/* SEC("tc"), which this libbpf knows: the attach type (BPF_TCX_*) is the link's, chosen when
 * ifmeterd --attach-link makes it. */
SEC("tc")
int ifmeter_tcx_ingress(struct __sk_buff *skb) { return count_link(skb, 0); }

SEC("tc")
int ifmeter_tcx_egress(struct __sk_buff *skb) { return count_link(skb, 1); }

char LICENSE[] SEC("license") = "GPL";
