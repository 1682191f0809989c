/* CAppCounters: loading the application counter, attaching it as bpf_links, pinning it, and
 * taking the pins away again. */
#include "CAppCounters.h"
#include "apps_shared.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <netinet/in.h>

/* Linux 5.14; older C libraries do not name it. */
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* libbpf reports why a load or pin failed only through its print callback, which is one for
 * the process: the callback keeps each thread's last warning, so concurrent callers never see
 * each other's. Nothing is printed to stderr (the daemon's log is the caller's). */
static __thread char ifmeter_apps_last[512];
static pthread_once_t ifmeter_apps_print_once = PTHREAD_ONCE_INIT;

static int ifmeter_apps_print(enum libbpf_print_level level, const char *format, va_list args) {
    if (level != LIBBPF_WARN) return 0;
    int n = vsnprintf(ifmeter_apps_last, sizeof ifmeter_apps_last, format, args);
    /* libbpf ends its lines with a newline; the caller's message is one line. */
    size_t len = strlen(ifmeter_apps_last);
    while (len > 0 && ifmeter_apps_last[len - 1] == '\n') ifmeter_apps_last[--len] = '\0';
    /* Its own name, which the caller puts in front of every message it quotes. */
    static const char prefix[] = "libbpf: ";
    if (strncmp(ifmeter_apps_last, prefix, sizeof prefix - 1) == 0)
        memmove(ifmeter_apps_last, ifmeter_apps_last + sizeof prefix - 1, len - (sizeof prefix - 1) + 1);
    return n;
}

static void ifmeter_apps_install_print(void) { libbpf_set_print(ifmeter_apps_print); }

void ifmeter_apps_message_reset(void) {
    pthread_once(&ifmeter_apps_print_once, ifmeter_apps_install_print);
    ifmeter_apps_last[0] = '\0';
}

void ifmeter_apps_message_copy(char *message, size_t size) {
    if (!message || size == 0) return;
    snprintf(message, size, "%s", ifmeter_apps_last);
}

int ifmeter_apps_pin_path(char *path, size_t size, const char *dir, const char *name) {
    int n = snprintf(path, size, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Maps (the daemon's), then programs pinned unattached (root's), then links (root's): in the
 * order they are made; taken away in the reverse one. */
static const char *const ifmeter_apps_pins[] = {
    IFMETER_APPS_PIN_COUNTS, IFMETER_APPS_PIN_OVERFLOW, IFMETER_APPS_PIN_LOST,
    IFMETER_APPS_PIN_PREFIXES, IFMETER_APPS_PIN_READY, IFMETER_APPS_PIN_SCOPES,
    IFMETER_APPS_PIN_TCX_INGRESS, IFMETER_APPS_PIN_TCX_EGRESS,
    IFMETER_APPS_PIN_INGRESS, IFMETER_APPS_PIN_EGRESS,
};
#define IFMETER_APPS_PIN_COUNT (sizeof ifmeter_apps_pins / sizeof ifmeter_apps_pins[0])
#define IFMETER_APPS_MAP_PINS 6
#define IFMETER_APPS_PROGRAM_PINS 2

int ifmeter_apps_detach(const char *pin_dir) {
    char path[PATH_MAX];
    /* The interfaces' tcx links first: they stop counting before their maps go. */
    int first = ifmeter_tcx_unpin_all(pin_dir);
    for (size_t i = IFMETER_APPS_PIN_COUNT; i-- > 0;) {
        int err = ifmeter_apps_pin_path(path, sizeof path, pin_dir, ifmeter_apps_pins[i]);
        if (err == 0 && unlink(path) != 0 && errno != ENOENT) err = -errno;
        if (err < 0 && first == 0) first = err;
    }
    /* Not empty (someone else's pins) or already gone: left as it is. */
    if (rmdir(pin_dir) != 0 && errno != ENOENT && errno != ENOTEMPTY && first == 0) first = -errno;
    return first;
}

/* Pins `map` at `path`, owned by uid:gid, 0600. */
static int ifmeter_apps_pin_map(struct bpf_object *object, const char *name, const char *path,
                                uint32_t uid, uint32_t gid) {
    struct bpf_map *map = bpf_object__find_map_by_name(object, name);
    if (!map) return -ENOENT;
    int err = bpf_map__pin(map, path);
    if (err < 0) return err;
    /* The pin is born root's and 0600 (bpffs, less the umask): never wider than it ends. */
    if (chown(path, uid, gid) != 0 || chmod(path, 0600) != 0) return -errno;
    return 0;
}

/* Pins program `name`, unattached, at `path`: root's, 0600. ifmeterd --attach-link opens it to
 * attach it to an interface. */
static int ifmeter_apps_pin_program(struct bpf_object *object, const char *name, const char *path) {
    struct bpf_program *program = bpf_object__find_program_by_name(object, name);
    if (!program) return -ENOENT;
    int err = bpf_program__pin(program, path);
    if (err == 0 && chmod(path, 0600) != 0) err = -errno;
    return err;
}

/* Attaches program `name` to the cgroup `cgroup_fd` as a link and pins the link at `path`. */
static int ifmeter_apps_pin_link(struct bpf_object *object, const char *name, int cgroup_fd,
                                 const char *path, struct bpf_link **link) {
    struct bpf_program *program = bpf_object__find_program_by_name(object, name);
    if (!program) return -ENOENT;
    *link = bpf_program__attach_cgroup(program, cgroup_fd);
    if (!*link) return -errno;
    int err = bpf_link__pin(*link, path);
    if (err == 0 && chmod(path, 0600) != 0) err = -errno;
    return err;
}

/* Writes `config` into the object's .rodata before load. */
static int ifmeter_apps_configure(struct bpf_object *object, uint64_t netns_cookie) {
    struct bpf_map *map, *rodata = NULL;
    bpf_object__for_each_map(map, object) {
        const char *name = bpf_map__name(map);
        size_t length = strlen(name);
        /* libbpf names it after the object, cut to fit: "ifmeter_apps.rodata" or shorter. */
        if (length >= 7 && strcmp(name + length - 7, ".rodata") == 0) rodata = map;
    }
    size_t size = 0;
    if (!rodata || !bpf_map__initial_value(rodata, &size) || size != sizeof(struct ifmeter_apps_config))
        return -EPROTO;
    struct ifmeter_apps_config config = {.netns_cookie = netns_cookie};
    return bpf_map__set_initial_value(rodata, &config, sizeof config);
}

int ifmeter_apps_netns_cookie(uint64_t *cookie) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    socklen_t size = sizeof *cookie;
    int err = getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &size) == 0 ? 0 : -errno;
    close(fd);
    return err;
}

int ifmeter_apps_attach(const void *object_bytes, size_t length, const char *cgroup_path,
                        const char *pin_dir, uint32_t max_entries, uint32_t overflow_entries,
                        uint64_t netns_cookie, uint32_t uid, uint32_t gid, char *message, size_t message_size) {
    ifmeter_apps_message_reset();
    char paths[IFMETER_APPS_PIN_COUNT][PATH_MAX];
    for (size_t i = 0; i < IFMETER_APPS_PIN_COUNT; i++) {
        int err = ifmeter_apps_pin_path(paths[i], PATH_MAX, pin_dir, ifmeter_apps_pins[i]);
        if (err < 0) return err;
        struct stat st;
        /* Attached already: a second program beside the first would count everything twice. */
        if (lstat(paths[i], &st) == 0) return -EEXIST;
    }
    int created = mkdir(pin_dir, 0755) == 0;
    if (!created && errno != EEXIST) return -errno;
    /* The umask's say undone. */
    int cgroup_fd = created && chmod(pin_dir, 0755) != 0 ? -1 : open(cgroup_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cgroup_fd < 0) {
        int err = -errno;
        if (created) rmdir(pin_dir);
        return err;
    }

    struct bpf_link *ingress = NULL, *egress = NULL;
    int pinned = 0;
    LIBBPF_OPTS(bpf_object_open_opts, options, .object_name = "ifmeter_apps");
    struct bpf_object *object = bpf_object__open_mem(object_bytes, length, &options);
    int err = object ? 0 : -errno;
    if (err == 0) {
        struct bpf_map *counts = bpf_object__find_map_by_name(object, "app_counts");
        err = counts ? bpf_map__set_max_entries(counts, max_entries) : -ENOENT;
    }
    if (err == 0 && overflow_entries > 0) {
        struct bpf_map *overflow = bpf_object__find_map_by_name(object, "app_overflow");
        err = overflow ? bpf_map__set_max_entries(overflow, overflow_entries) : -ENOENT;
    }
    if (err == 0) err = ifmeter_apps_configure(object, netns_cookie);
    if (err == 0) err = bpf_object__load(object);
    /* Maps before links: a link pinned is counting, and its maps must already be reachable. */
    for (; err == 0 && pinned < IFMETER_APPS_MAP_PINS; pinned++)
        err = ifmeter_apps_pin_map(object, ifmeter_apps_pins[pinned], paths[pinned], uid, gid);
    static const char *const programs[] = {"ifmeter_tcx_ingress", "ifmeter_tcx_egress"};
    for (int i = 0; err == 0 && i < IFMETER_APPS_PROGRAM_PINS; i++, pinned++)
        err = ifmeter_apps_pin_program(object, programs[i], paths[pinned]);
    if (err == 0) {
        err = ifmeter_apps_pin_link(object, "ifmeter_apps_ingress", cgroup_fd, paths[pinned], &ingress);
        pinned++;
    }
    if (err == 0) {
        err = ifmeter_apps_pin_link(object, "ifmeter_apps_egress", cgroup_fd, paths[pinned], &egress);
        pinned++;
    }
    if (err < 0) {
        /* The failed step may have pinned before failing (a chown): its pin goes too. */
        for (int i = pinned; i-- > 0;) unlink(paths[i]);
        if (created) rmdir(pin_dir);
        ifmeter_apps_message_copy(message, message_size);
    } else if (message && message_size) {
        message[0] = '\0';
    }
    /* Closing the links' and maps' descriptors: the pins hold them now (or, on failure, nothing
     * does, and the programs detach). */
    bpf_link__destroy(egress);
    bpf_link__destroy(ingress);
    bpf_object__close(object);
    close(cgroup_fd);
    return err;
}

int ifmeter_apps_is_bpffs(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -errno;
    /* f_type is a signed long on x86-64; the magic is compared as the kernel writes it. */
    return (unsigned long)info.f_type == (unsigned long)BPF_FS_MAGIC ? 1 : 0;
}
