/* CAppCounters: opening the pinned maps and reading them, as a process with no capability
 * can: only the pins' file permissions decide. */
#include "CAppCounters.h"
#include "apps_shared.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own "not supported", which bpf() can return */
#endif

/* Entries asked for per BPF_MAP_LOOKUP_BATCH: 256 keys and values on the stack, 12 KiB. */
#define IFMETER_APPS_BATCH 256

/* Opens one pin and checks it holds a map of the expected kind and layout. */
int ifmeter_apps_open_one(const char *pin_dir, const char *name, int writable,
                                 uint32_t type, uint32_t key_size, uint32_t value_size,
                                 int *fd, uint32_t *id, uint32_t *max_entries) {
    char path[PATH_MAX];
    int err = ifmeter_apps_pin_path(path, sizeof path, pin_dir, name);
    if (err < 0) return err;
    LIBBPF_OPTS(bpf_obj_get_opts, options, .file_flags = writable ? 0 : BPF_F_RDONLY);
    *fd = bpf_obj_get_opts(path, &options);
    if (*fd < 0) return -errno;
    struct bpf_map_info info;
    memset(&info, 0, sizeof info);
    uint32_t length = sizeof info;
    err = bpf_obj_get_info_by_fd(*fd, &info, &length);
    if (err == 0 && (info.type != type || info.key_size != key_size || info.value_size != value_size))
        err = -EPROTO;
    if (err < 0) {
        close(*fd);
        *fd = -1;
        return err;
    }
    *id = info.id;
    if (max_entries) *max_entries = info.max_entries;
    return 0;
}

int ifmeter_apps_open(const char *pin_dir, int writable, ifmeter_apps_maps *out) {
    memset(out, 0, sizeof *out);
    out->counts_fd = out->overflow_fd = out->lost_fd = -1;
    const uint32_t value = sizeof(struct ifmeter_apps_value);
    int err = ifmeter_apps_open_one(pin_dir, IFMETER_APPS_PIN_COUNTS, writable, BPF_MAP_TYPE_HASH,
                                    sizeof(struct ifmeter_apps_key), value, &out->counts_fd,
                                    &out->counts_id, &out->counts_max_entries);
    if (err == 0)
        err = ifmeter_apps_open_one(pin_dir, IFMETER_APPS_PIN_OVERFLOW, writable, BPF_MAP_TYPE_HASH,
                                    sizeof(uint32_t), value, &out->overflow_fd, &out->overflow_id,
                                    &out->overflow_max_entries);
    if (err == 0)
        err = ifmeter_apps_open_one(pin_dir, IFMETER_APPS_PIN_LOST, writable, BPF_MAP_TYPE_ARRAY,
                                    sizeof(uint32_t), value, &out->lost_fd, &out->lost_id, NULL);
    /* A directory a previous release pinned has no scopes' maps: its app_counts has the same
     * sizes but keys without a scope, so it is another layout. */
    for (size_t i = 0; err == 0 && i < 3; i++) {
        static const char *const scopes[] = {IFMETER_APPS_PIN_PREFIXES, IFMETER_APPS_PIN_READY, IFMETER_APPS_PIN_SCOPES};
        char path[PATH_MAX];
        struct stat st;
        err = ifmeter_apps_pin_path(path, sizeof path, pin_dir, scopes[i]);
        /* lstat, not access(2): access checks with the real uid and without the effective
         * capabilities, so the unit's CAP_DAC_READ_SEARCH would not pass bpffs's 0700. */
        if (err == 0 && lstat(path, &st) != 0) err = errno == ENOENT ? -EPROTO : -errno;
    }
    if (err < 0) ifmeter_apps_close(out);
    return err;
}

void ifmeter_apps_close(ifmeter_apps_maps *maps) {
    int *fds[] = { &maps->counts_fd, &maps->overflow_fd, &maps->lost_fd };
    for (size_t i = 0; i < 3; i++) {
        if (*fds[i] >= 0) close(*fds[i]);
        *fds[i] = -1;
    }
}


static void ifmeter_apps_store_count(void *entries, size_t index, const void *key, const void *value) {
    ifmeter_apps_entry *entry = (ifmeter_apps_entry *)entries + index;
    memcpy(&entry->key, key, sizeof entry->key);
    memcpy(&entry->value, value, sizeof entry->value);
}

static void ifmeter_apps_store_overflow(void *entries, size_t index, const void *key, const void *value) {
    ifmeter_apps_overflow_entry *entry = (ifmeter_apps_overflow_entry *)entries + index;
    memcpy(&entry->ifindex, key, sizeof entry->ifindex);
    entry->pad = 0;
    memcpy(&entry->value, value, sizeof entry->value);
}

/* One key at a time (BPF_MAP_GET_NEXT_KEY, then a lookup): for kernels without batches. A key
 * deleted between the two calls is skipped; one deleted under the walk may restart it at the
 * first key, which the count bound stops. */
static int ifmeter_apps_walk(int fd, size_t key_size, void *entries, size_t capacity,
                             ifmeter_apps_store store) {
    uint8_t key[16], next[16];
    struct ifmeter_apps_value value;
    size_t count = 0;
    const void *previous = NULL;
    for (;;) {
        if (bpf_map_get_next_key(fd, previous, next) != 0) return errno == ENOENT ? (int)count : -errno;
        memcpy(key, next, key_size);
        previous = key;
        if (bpf_map_lookup_elem(fd, key, &value) != 0) {
            if (errno == ENOENT) continue;
            return -errno;
        }
        if (count == capacity) return -ENOSPC;
        store(entries, count++, key, &value);
    }
}

int ifmeter_apps_read_map(int fd, size_t key_size, void *entries, size_t capacity,
                                 ifmeter_apps_store store) {
    uint8_t keys[IFMETER_APPS_BATCH * 16];
    struct ifmeter_apps_value values[IFMETER_APPS_BATCH];
    /* The batch position: a bucket number for a hash (4 bytes), a key for others. */
    uint8_t in_batch[16], out_batch[16];
    size_t count = 0;
    for (int first = 1;; first = 0) {
        uint32_t got = IFMETER_APPS_BATCH;
        int err = bpf_map_lookup_batch(fd, first ? NULL : in_batch, out_batch, keys, values, &got, NULL);
        err = err < 0 ? errno : 0;
        if (err != 0 && err != ENOENT) {
            /* No batches for this map or kernel, or one hash bucket larger than a batch. */
            if (first && (err == EINVAL || err == ENOTSUPP || err == EOPNOTSUPP || err == ENOSPC))
                return ifmeter_apps_walk(fd, key_size, entries, capacity, store);
            return -err;
        }
        for (uint32_t i = 0; i < got; i++) {
            if (count == capacity) return -ENOSPC;
            store(entries, count++, keys + i * key_size, &values[i]);
        }
        if (err == ENOENT) return (int)count; /* the end of the map */
        memcpy(in_batch, out_batch, sizeof in_batch);
    }
}

int ifmeter_apps_read_counts(const ifmeter_apps_maps *maps, ifmeter_apps_entry *entries,
                             size_t capacity) {
    return ifmeter_apps_read_map(maps->counts_fd, sizeof(struct ifmeter_apps_key), entries,
                                 capacity, ifmeter_apps_store_count);
}

int ifmeter_apps_read_overflow(const ifmeter_apps_maps *maps,
                               ifmeter_apps_overflow_entry *entries, size_t capacity) {
    return ifmeter_apps_read_map(maps->overflow_fd, sizeof(uint32_t), entries, capacity,
                                 ifmeter_apps_store_overflow);
}

int ifmeter_apps_read_lost(const ifmeter_apps_maps *maps, struct ifmeter_apps_value *out) {
    uint32_t zero = 0;
    return bpf_map_lookup_elem(maps->lost_fd, &zero, out) == 0 ? 0 : -errno;
}

int ifmeter_apps_take(const ifmeter_apps_maps *maps, uint64_t cgroup_id, uint32_t ifindex, uint32_t scope,
                      struct ifmeter_apps_value *out) {
    struct ifmeter_apps_key key = { .cgroup_id = cgroup_id, .ifindex = ifindex, .scope = scope };
    return bpf_map_lookup_and_delete_elem(maps->counts_fd, &key, out) == 0 ? 0 : -errno;
}
