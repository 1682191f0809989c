/* CAppCounters: attaching the pinned interface programs to an interface as tcx links
 * (ifmeterd --attach-link, docs/SCOPES.md), and removing the pins of links whose interface is
 * gone. Root's: CAP_BPF and CAP_NET_ADMIN. */
#include "CAppCounters.h"
#include "apps_shared.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kernel's link type of a tcx link (Linux 6.6), unnamed in older headers. */
#define IFMETER_BPF_LINK_TYPE_TCX 11

/* A tcx link's info as the kernel writes it: the C library's older struct bpf_link_info has no
 * tcx member, but its netns one sits where tcx's {ifindex, attach_type} does. */
_Static_assert(offsetof(struct bpf_link_info, netns.netns_ino) == 16, "tcx.ifindex's offset");

/* Whether program `prog_id` is attached at this namespace's interface `ifindex`, in the
 * direction `egress` says: 1, 0, or -errno. A link's own info names an ifindex but no namespace:
 * a link moved away with its number, and another made here with it, look the same there. */
static int ifmeter_tcx_attached_here(int32_t ifindex, int egress, uint32_t prog_id) {
    uint32_t ids[64];
    LIBBPF_OPTS(bpf_prog_query_opts, query, .prog_ids = ids, .prog_cnt = 64);
    /* The kernel reads the target as an ifindex for tcx; the old headers call it target_fd. */
    if (bpf_prog_query_opts(ifindex, (enum bpf_attach_type)(egress ? IFMETER_BPF_TCX_EGRESS : IFMETER_BPF_TCX_INGRESS),
                            &query) != 0)
        return errno == ENODEV ? 0 : -errno;
    for (uint32_t i = 0; i < query.prog_cnt && i < 64; i++)
        if (ids[i] == prog_id) return 1;
    return 0;
}

/* The interface `fd`'s tcx link is on: its ifindex, 0 when the interface is gone (the link is
 * defunct) or is no longer this namespace's (moved away, its number perhaps another link's
 * here), or -errno; -EPROTO when it is not a tcx link. */
static int ifmeter_tcx_link_ifindex(int fd, int egress) {
    struct bpf_link_info info;
    memset(&info, 0, sizeof info);
    uint32_t length = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &length) != 0) return -errno;
    if (info.type != IFMETER_BPF_LINK_TYPE_TCX) return -EPROTO;
    int ifindex = (int)info.netns.netns_ino;
    if (ifindex <= 0) return ifindex;
    int here = ifmeter_tcx_attached_here(ifindex, egress, info.prog_id);
    return here < 0 ? here : here ? ifindex : 0;
}

/* The ifindex and direction a pin's name says: "tcx_12_ingress" → 12, 0 (egress 1); -1 when
 * the name is not one of these pins'. */
static int32_t ifmeter_tcx_parse_pin(const char *name, int *egress) {
    int consumed = 0;
    unsigned long ifindex = 0;
    char direction[8] = {0};
    if (sscanf(name, "tcx_%lu_%7[a-z]%n", &ifindex, direction, &consumed) != 2 || name[consumed] != '\0')
        return -1;
    if (ifindex == 0 || ifindex > INT32_MAX) return -1;
    if (strcmp(direction, "ingress") == 0) *egress = 0;
    else if (strcmp(direction, "egress") == 0) *egress = 1;
    else return -1;
    return (int32_t)ifindex;
}

/* Deletes the link_scopes entries of `ifindex`, each scope, from the map pinned in `pin_dir`. */
static void ifmeter_tcx_forget(const char *pin_dir, int32_t ifindex) {
    ifmeter_scope_maps maps;
    if (ifmeter_scopes_open(pin_dir, 1, &maps) != 0) return;
    for (uint32_t scope = 0; scope <= IFMETER_SCOPE_UNKNOWN; scope++) {
        struct ifmeter_scope_key key = {.ifindex = (uint32_t)ifindex, .scope = scope};
        bpf_map_delete_elem(maps.scopes_fd, &key);
    }
    ifmeter_scopes_close(&maps);
}

/* Walks the tcx link pins; `all`: removes every one, else only those whose interface is gone. */
static int ifmeter_tcx_sweep(const char *pin_dir, int all) {
    DIR *dir = opendir(pin_dir);
    if (!dir) return errno == ENOENT ? 0 : -errno;
    int removed = 0, first = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        int egress;
        int32_t ifindex = ifmeter_tcx_parse_pin(entry->d_name, &egress);
        if (ifindex < 0) continue;
        char path[PATH_MAX];
        if (ifmeter_apps_pin_path(path, sizeof path, pin_dir, entry->d_name) != 0) continue;
        int gone = all;
        if (!gone) {
            int fd = bpf_obj_get(path);
            int on = fd < 0 ? -errno : ifmeter_tcx_link_ifindex(fd, egress);
            if (fd >= 0) close(fd);
            /* Not a link this program pinned, on another interface than its name says, or on one
             * that left this namespace (moved: it counts on there, under its number). */
            gone = on == 0 || on == -EPROTO || (on > 0 && on != ifindex);
        }
        if (!gone) continue;
        if (unlink(path) != 0 && errno != ENOENT) {
            if (first == 0) first = -errno;
            continue;
        }
        removed++;
        if (!egress) ifmeter_tcx_forget(pin_dir, ifindex);
    }
    closedir(dir);
    return first < 0 ? first : removed;
}

int ifmeter_tcx_unpin_all(const char *pin_dir) {
    int result = ifmeter_tcx_sweep(pin_dir, 1);
    return result < 0 ? result : 0;
}

/* An exclusive lock on the pin directory, held until `*fd` is closed: two helpers (the daemon's
 * request and an administrator's --attach-link, or two connections) would otherwise each see
 * the other's pin appear, take it for their own failure and remove it. -errno on failure. */
static int ifmeter_tcx_lock(const char *pin_dir, int *fd) {
    *fd = open(pin_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd < 0) return -errno;
    int err;
    do err = flock(*fd, LOCK_EX); while (err != 0 && errno == EINTR);
    if (err != 0) {
        err = -errno;
        close(*fd);
        *fd = -1;
    }
    return err;
}

int ifmeter_tcx_prune(const char *pin_dir) {
    int lock;
    int err = ifmeter_tcx_lock(pin_dir, &lock);
    if (err < 0) return err == -ENOENT ? 0 : err;
    int result = ifmeter_tcx_sweep(pin_dir, 0);
    close(lock);
    return result;
}

/* Attaches one direction unless its pin holds a live link on `ifindex`: 1 made, 0 kept, -errno. */
static int ifmeter_tcx_attach_one(const char *pin_dir, int32_t ifindex, int egress) {
    char path[PATH_MAX], name[64], program_path[PATH_MAX];
    snprintf(name, sizeof name, "tcx_%d_%s", ifindex, egress ? "egress" : "ingress");
    int err = ifmeter_apps_pin_path(path, sizeof path, pin_dir, name);
    if (err == 0)
        err = ifmeter_apps_pin_path(program_path, sizeof program_path, pin_dir,
                                    egress ? IFMETER_APPS_PIN_TCX_EGRESS : IFMETER_APPS_PIN_TCX_INGRESS);
    if (err < 0) return err;
    int existing = bpf_obj_get(path);
    if (existing >= 0) {
        int on = ifmeter_tcx_link_ifindex(existing, egress);
        close(existing);
        if (on == ifindex) return 0;
        if (unlink(path) != 0 && errno != ENOENT) return -errno;
    }
    int program = bpf_obj_get(program_path);
    if (program < 0) return errno == ENOENT ? -EPROTO : -errno;
    int link = bpf_link_create(program, ifindex, egress ? IFMETER_BPF_TCX_EGRESS : IFMETER_BPF_TCX_INGRESS, NULL);
    err = link < 0 ? -errno : 0;
    close(program);
    if (err < 0) return err;
    if (bpf_obj_pin(link, path) != 0) err = -errno;
    else if (chmod(path, 0600) != 0) err = -errno;
    if (err < 0) unlink(path);
    /* The pin holds the link now; on failure the link goes with this descriptor. */
    close(link);
    return err < 0 ? err : 1;
}

static int ifmeter_tcx_attach_locked(const char *pin_dir, int32_t ifindex, ifmeter_tcx_result *out);

int ifmeter_tcx_attach(const char *pin_dir, int32_t ifindex, ifmeter_tcx_result *out) {
    memset(out, 0, sizeof *out);
    if (ifindex <= 0) return -EINVAL;
    int lock;
    int err = ifmeter_tcx_lock(pin_dir, &lock);
    if (err < 0) return err == -ENOENT ? -EPROTO : err;
    err = ifmeter_tcx_attach_locked(pin_dir, ifindex, out);
    close(lock);
    return err;
}

static int ifmeter_tcx_attach_locked(const char *pin_dir, int32_t ifindex, ifmeter_tcx_result *out) {
    int pruned = ifmeter_tcx_sweep(pin_dir, 0);
    if (pruned < 0) return pruned;
    out->pins_pruned = pruned;
    /* The entries first: an interface with its programs attached is one with entries. */
    ifmeter_scope_maps maps;
    int err = ifmeter_scopes_open(pin_dir, 1, &maps);
    if (err == -ENOENT) err = -EPROTO;
    if (err < 0) return err;
    struct ifmeter_apps_value zero;
    memset(&zero, 0, sizeof zero);
    for (uint32_t scope = IFMETER_SCOPE_LOCAL; err == 0 && scope <= IFMETER_SCOPE_INTERNET; scope++) {
        struct ifmeter_scope_key key = {.ifindex = (uint32_t)ifindex, .scope = scope};
        if (bpf_map_update_elem(maps.scopes_fd, &key, &zero, BPF_NOEXIST) != 0 && errno != EEXIST) err = -errno;
    }
    ifmeter_scopes_close(&maps);
    for (int egress = 0; err == 0 && egress <= 1; egress++) {
        int made = ifmeter_tcx_attach_one(pin_dir, ifindex, egress);
        if (made < 0) err = made;
        else out->links_made += made;
    }
    if (err < 0) {
        /* Both directions or none, and entries only for an interface covered (no interface of
         * that index: -ENODEV): the entries would say it is. */
        for (int egress = 0; egress <= 1; egress++) {
            char path[PATH_MAX], name[64];
            snprintf(name, sizeof name, "tcx_%d_%s", ifindex, egress ? "egress" : "ingress");
            if (ifmeter_apps_pin_path(path, sizeof path, pin_dir, name) == 0) unlink(path);
        }
        ifmeter_tcx_forget(pin_dir, ifindex);
    }
    return err;
}
