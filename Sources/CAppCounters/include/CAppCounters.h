/* CAppCounters: loads, attaches, pins and reads the application counter (docs/APPS.md).
 * Plain structs and integer returns: 0 or a count, or -errno. Where libbpf says more than an
 * errno, its last message is copied into the caller's `message` buffer. No policy: what to
 * attach where, and what a failure means, is the caller's (IfMeterKernel). */
#ifndef IFMETER_CAPPCOUNTERS_H
#define IFMETER_CAPPCOUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "app_counters_layout.h"

/* The pins ifmeter_apps_attach makes in its pin directory. */
#define IFMETER_APPS_PIN_COUNTS "app_counts"
#define IFMETER_APPS_PIN_OVERFLOW "app_overflow"
#define IFMETER_APPS_PIN_LOST "app_lost"
#define IFMETER_APPS_PIN_INGRESS "link_ingress"
#define IFMETER_APPS_PIN_EGRESS "link_egress"
/* The scopes' maps (docs/SCOPES.md): the daemon's, like the three above. */
#define IFMETER_APPS_PIN_PREFIXES "local_prefixes"
#define IFMETER_APPS_PIN_READY "scope_ready"
#define IFMETER_APPS_PIN_SCOPES "link_scopes"
/* The interface programs, pinned unattached (root's): ifmeter_tcx_attach attaches them. */
#define IFMETER_APPS_PIN_TCX_INGRESS "tcx_ingress_program"
#define IFMETER_APPS_PIN_TCX_EGRESS "tcx_egress_program"
/* An interface's tcx links are pinned as "tcx_IFINDEX_ingress" and "tcx_IFINDEX_egress". */

/* One entry of app_counts. */
typedef struct ifmeter_apps_entry {
    struct ifmeter_apps_key key;
    struct ifmeter_apps_value value;
} ifmeter_apps_entry;

/* One entry of app_overflow. */
typedef struct ifmeter_apps_overflow_entry {
    uint32_t ifindex;
    uint32_t pad;
    struct ifmeter_apps_value value;
} ifmeter_apps_overflow_entry;

/* The three pinned maps, open. A map's id is the kernel's for that map for as long as it lives:
 * a different id at the same pin is a re-created map, whose counters started again at 0. */
typedef struct ifmeter_apps_maps {
    int counts_fd;
    int overflow_fd;
    int lost_fd;
    uint32_t counts_id;
    uint32_t overflow_id;
    uint32_t lost_id;
    uint32_t counts_max_entries;
    uint32_t overflow_max_entries;
} ifmeter_apps_maps;

/* One entry of link_scopes. */
typedef struct ifmeter_scope_entry {
    struct ifmeter_scope_key key;
    struct ifmeter_apps_value value;
} ifmeter_scope_entry;

/* The scopes' three pinned maps, open. */
typedef struct ifmeter_scope_maps {
    int prefixes_fd;
    int ready_fd;
    int scopes_fd;
    uint32_t scopes_id;          /* link_scopes' kernel id */
    uint32_t scopes_max_entries;
    uint32_t prefixes_max_entries;
} ifmeter_scope_maps;

/* Loads the BPF object `object` (`length` bytes) with app_counts sized to `max_entries` and
 * app_overflow to `overflow_entries` (0: IFMETER_APPS_OVERFLOW_ENTRIES),
 * attaches its ingress and egress programs to the cgroup2 directory `cgroup_path` as bpf_links
 * (they count every socket of that cgroup and its descendants), and pins the two links and the
 * three maps in `pin_dir` (created 0755 if missing; it must be on a bpf filesystem). The map
 * pins are chowned to `uid`:`gid` and made 0600: that user can read and delete entries, nobody
 * else can open them. The links' pins are root's, 0600.
 * Nothing stays open when it returns: the pins hold the programs and maps.
 * -EEXIST when any of the pins exists already (attached before): nothing is changed, so the
 * traffic is never counted twice; ifmeter_apps_detach first. On any failure, what was pinned is
 * unpinned again, and `pin_dir` removed if this call made it. `message` (may be NULL) receives libbpf's last word on a failure, or "". */
int ifmeter_apps_attach(const void *object, size_t length, const char *cgroup_path,
                        const char *pin_dir, uint32_t max_entries, uint32_t overflow_entries,
                        uint64_t netns_cookie, uint32_t uid, uint32_t gid, char *message, size_t message_size);

/* The cookie of the caller's network namespace (SO_NETNS_COOKIE, Linux 5.14), what
 * `netns_cookie` of ifmeter_apps_attach takes. */
int ifmeter_apps_netns_cookie(uint64_t *cookie);

/* Removes every tcx link pin, the ten pins above and then `pin_dir` if it is empty. Removing the links' pins detaches
 * the programs (no fd holds them); the maps go with their last fd. 0 when nothing was left,
 * also when nothing was there, or the first -errno other than -ENOENT. */
int ifmeter_apps_detach(const char *pin_dir);

/* 1 when `path` is on a bpf filesystem, 0 when it is not, -errno when it cannot be told. */
int ifmeter_apps_is_bpffs(const char *path);

/* Opens the three pinned maps (BPF_OBJ_GET; read-only unless `writable`) and reads each one's
 * id and size. -EPROTO when a pin holds a map of another layout, or the scopes' pins are
 * missing (a previous release's directory). On failure nothing stays open. */
int ifmeter_apps_open(const char *pin_dir, int writable, ifmeter_apps_maps *out);
void ifmeter_apps_close(ifmeter_apps_maps *maps);

/* Every entry of app_counts into `entries` (room for `capacity`; counts_max_entries always
 * suffices). Returns the count, or -ENOSPC when the map held more than `capacity`, or -errno.
 * Batched (BPF_MAP_LOOKUP_BATCH); one key at a time where the kernel has no batches. */
int ifmeter_apps_read_counts(const ifmeter_apps_maps *maps, ifmeter_apps_entry *entries,
                             size_t capacity);

/* The same for app_overflow. */
int ifmeter_apps_read_overflow(const ifmeter_apps_maps *maps,
                               ifmeter_apps_overflow_entry *entries, size_t capacity);

/* app_lost's one value. 0 or -errno. */
int ifmeter_apps_read_lost(const ifmeter_apps_maps *maps, struct ifmeter_apps_value *out);

/* Reads and deletes app_counts' entry for (`cgroup_id`, `ifindex`, `scope`) in one call
 * (BPF_MAP_LOOKUP_AND_DELETE_ELEM; needs the maps open writable). 0 with *out filled, -ENOENT
 * when there is no such entry, or -errno. */
int ifmeter_apps_take(const ifmeter_apps_maps *maps, uint64_t cgroup_id, uint32_t ifindex, uint32_t scope,
                      struct ifmeter_apps_value *out);

/* Opens the scopes' pinned maps (read-only unless `writable`) and checks their layouts: -EPROTO
 * for another layout, -ENOENT when they are not pinned. On failure nothing stays open. */
int ifmeter_scopes_open(const char *pin_dir, int writable, ifmeter_scope_maps *out);
void ifmeter_scopes_close(ifmeter_scope_maps *maps);

/* Every entry of link_scopes; as ifmeter_apps_read_counts. */
int ifmeter_scopes_read(const ifmeter_scope_maps *maps, ifmeter_scope_entry *entries, size_t capacity);

/* Every key of local_prefixes (a walk: LPM tries have no batches). The count, -ENOSPC when it
 * held more than `capacity`, or -errno. */
int ifmeter_prefixes_read(const ifmeter_scope_maps *maps, struct ifmeter_prefix_key *keys, size_t capacity);
/* Adds `key` (value 1), or removes it (0 also when it was not there). 0 or -errno. */
int ifmeter_prefixes_add(const ifmeter_scope_maps *maps, const struct ifmeter_prefix_key *key);
int ifmeter_prefixes_remove(const ifmeter_scope_maps *maps, const struct ifmeter_prefix_key *key);
/* scope_ready's value: read, or written. 0 or -errno. */
int ifmeter_scopes_get_ready(const ifmeter_scope_maps *maps, uint32_t *value);
int ifmeter_scopes_set_ready(const ifmeter_scope_maps *maps, uint32_t value);

/* What ifmeter_tcx_attach did. */
typedef struct ifmeter_tcx_result {
    int32_t links_made;   /* tcx links made now (0: both were attached already) */
    int32_t pins_pruned;  /* tcx link pins removed: their interfaces were gone */
} ifmeter_tcx_result;

/* Attaches the pinned interface programs (IFMETER_APPS_PIN_TCX_*) to `ifindex` of the caller's
 * network namespace as tcx bpf_links (ingress and egress), pins them "tcx_IFINDEX_ingress" and
 * "tcx_IFINDEX_egress" (root's, 0600), and makes the interface's local and internet entries of
 * link_scopes (zero, BPF_NOEXIST). Idempotent: a link pinned and alive on `ifindex` is kept.
 * First, every tcx link pin whose interface is gone is removed, and its link_scopes entries with
 * it (an ifindex used again is another interface). Needs CAP_BPF and CAP_NET_ADMIN. 0 or
 * -errno (-ENODEV: no such interface; -EPROTO: the programs are not pinned there). */
int ifmeter_tcx_attach(const char *pin_dir, int32_t ifindex, ifmeter_tcx_result *out);

/* Only the pruning of ifmeter_tcx_attach. The count removed, or -errno. */
int ifmeter_tcx_prune(const char *pin_dir);

#endif
