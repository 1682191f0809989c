/* CAppCounters: the scopes' maps (docs/SCOPES.md). The daemon, as their pins' owner and with no
 * capability, reads link_scopes and writes local_prefixes and scope_ready. */
#include "CAppCounters.h"
#include "apps_shared.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

int ifmeter_scopes_open(const char *pin_dir, int writable, ifmeter_scope_maps *out) {
    memset(out, 0, sizeof *out);
    out->prefixes_fd = out->ready_fd = out->scopes_fd = -1;
    uint32_t unused;
    int err = ifmeter_apps_open_one(pin_dir, IFMETER_APPS_PIN_SCOPES, writable, BPF_MAP_TYPE_HASH,
                                    sizeof(struct ifmeter_scope_key), sizeof(struct ifmeter_apps_value),
                                    &out->scopes_fd, &out->scopes_id, &out->scopes_max_entries);
    if (err == 0)
        err = ifmeter_apps_open_one(pin_dir, IFMETER_APPS_PIN_PREFIXES, writable, BPF_MAP_TYPE_LPM_TRIE,
                                    sizeof(struct ifmeter_prefix_key), sizeof(uint8_t), &out->prefixes_fd,
                                    &unused, &out->prefixes_max_entries);
    if (err == 0)
        err = ifmeter_apps_open_one(pin_dir, IFMETER_APPS_PIN_READY, writable, BPF_MAP_TYPE_ARRAY,
                                    sizeof(uint32_t), sizeof(uint32_t), &out->ready_fd, &unused, NULL);
    if (err < 0) ifmeter_scopes_close(out);
    return err;
}

void ifmeter_scopes_close(ifmeter_scope_maps *maps) {
    int *fds[] = { &maps->prefixes_fd, &maps->ready_fd, &maps->scopes_fd };
    for (size_t i = 0; i < 3; i++) {
        if (*fds[i] >= 0) close(*fds[i]);
        *fds[i] = -1;
    }
}

static void ifmeter_scopes_store(void *entries, size_t index, const void *key, const void *value) {
    ifmeter_scope_entry *entry = (ifmeter_scope_entry *)entries + index;
    memcpy(&entry->key, key, sizeof entry->key);
    memcpy(&entry->value, value, sizeof entry->value);
}

int ifmeter_scopes_read(const ifmeter_scope_maps *maps, ifmeter_scope_entry *entries, size_t capacity) {
    return ifmeter_apps_read_map(maps->scopes_fd, sizeof(struct ifmeter_scope_key), entries, capacity,
                                 ifmeter_scopes_store);
}

int ifmeter_prefixes_read(const ifmeter_scope_maps *maps, struct ifmeter_prefix_key *keys, size_t capacity) {
    struct ifmeter_prefix_key key, next;
    const void *previous = NULL;
    size_t count = 0;
    for (;;) {
        if (bpf_map_get_next_key(maps->prefixes_fd, previous, &next) != 0)
            return errno == ENOENT ? (int)count : -errno;
        if (count == capacity) return -ENOSPC;
        keys[count++] = next;
        key = next;
        previous = &key;
    }
}

int ifmeter_prefixes_add(const ifmeter_scope_maps *maps, const struct ifmeter_prefix_key *key) {
    uint8_t one = 1;
    return bpf_map_update_elem(maps->prefixes_fd, key, &one, BPF_ANY) == 0 ? 0 : -errno;
}

int ifmeter_prefixes_remove(const ifmeter_scope_maps *maps, const struct ifmeter_prefix_key *key) {
    return bpf_map_delete_elem(maps->prefixes_fd, key) == 0 || errno == ENOENT ? 0 : -errno;
}

int ifmeter_scopes_get_ready(const ifmeter_scope_maps *maps, uint32_t *value) {
    uint32_t zero = 0;
    return bpf_map_lookup_elem(maps->ready_fd, &zero, value) == 0 ? 0 : -errno;
}

int ifmeter_scopes_set_ready(const ifmeter_scope_maps *maps, uint32_t value) {
    uint32_t zero = 0;
    return bpf_map_update_elem(maps->ready_fd, &zero, &value, BPF_ANY) == 0 ? 0 : -errno;
}
