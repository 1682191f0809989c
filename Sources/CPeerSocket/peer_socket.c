#include "CPeerSocket.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

/* ifm_peer carries uid_t, gid_t and pid_t in fixed-width fields. */
_Static_assert(sizeof(uid_t) == sizeof(uint32_t), "uid_t is 32 bits");
_Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits");
_Static_assert(sizeof(pid_t) == sizeof(int32_t), "pid_t is 32 bits");
_Static_assert(sizeof(struct ucred) == 12, "struct ucred is pid, uid, gid");

int ifm_accept(int listen_fd) {
    for (;;) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) return fd;
        /* The one place EINTR is retried for accepting; the caller sees only real outcomes. */
        if (errno != EINTR) return -errno;
    }
}

int ifm_peer_credentials(int fd, ifm_peer *out) {
    memset(out, 0, sizeof *out);
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -errno;
    out->pid = credentials.pid;
    out->uid = credentials.uid;
    out->gid = credentials.gid;
    gid_t groups[IFM_PEER_GROUPS_MAX];
    socklen_t groups_length = sizeof groups;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &groups_length) == 0) {
        out->group_count = groups_length / sizeof(gid_t);
    } else if (errno == ERANGE) {
        /* More groups than we keep: the kernel said how many, and filled none. */
        out->groups_truncated = 1;
        out->group_count = 0;
    } else {
        return -errno;
    }
    memcpy(out->groups, groups, out->group_count * sizeof(gid_t));
    return 0;
}
