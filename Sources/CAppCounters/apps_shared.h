/* CAppCounters' internals shared by its files. */
#ifndef IFMETER_APPS_SHARED_H
#define IFMETER_APPS_SHARED_H

#include <stddef.h>
#include <stdint.h>

/* Starts keeping libbpf's warnings for this thread's next failure (and forgets older ones). */
void ifmeter_apps_message_reset(void);
/* Copies the last warning libbpf printed on this thread since the reset into `message`. */
void ifmeter_apps_message_copy(char *message, size_t size);

/* "`dir`/`name`" into `path`; -ENAMETOOLONG when it does not fit. */
int ifmeter_apps_pin_path(char *path, size_t size, const char *dir, const char *name);

/* Opens one pin and checks it holds a map of the expected kind and layout. */
int ifmeter_apps_open_one(const char *pin_dir, const char *name, int writable, uint32_t type,
                          uint32_t key_size, uint32_t value_size, int *fd, uint32_t *id,
                          uint32_t *max_entries);

/* Stores entry `index` of a read from its key and value. */
typedef void (*ifmeter_apps_store)(void *entries, size_t index, const void *key, const void *value);

/* Every entry of the map `fd` (keys of `key_size` ≤ 16 bytes, values ifmeter_apps_value),
 * batched where the kernel can. The count, -ENOSPC past `capacity`, or -errno. */
int ifmeter_apps_read_map(int fd, size_t key_size, void *entries, size_t capacity, ifmeter_apps_store store);

/* Removes every tcx link pin (tcx_IFINDEX_ingress/egress) in `pin_dir`, which detaches those
 * programs from their interfaces. 0, or the first -errno other than -ENOENT. */
int ifmeter_tcx_unpin_all(const char *pin_dir);

#endif
