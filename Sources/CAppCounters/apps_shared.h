/* CAppCounters' internals shared by its files. */
#ifndef IFMETER_APPS_SHARED_H
#define IFMETER_APPS_SHARED_H

#include <stddef.h>

/* Starts keeping libbpf's warnings for this thread's next failure (and forgets older ones). */
void ifmeter_apps_message_reset(void);
/* Copies the last warning libbpf printed on this thread since the reset into `message`. */
void ifmeter_apps_message_copy(char *message, size_t size);

/* "`dir`/`name`" into `path`; -ENAMETOOLONG when it does not fit. */
int ifmeter_apps_pin_path(char *path, size_t size, const char *dir, const char *name);

#endif
