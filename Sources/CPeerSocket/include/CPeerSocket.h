#ifndef IFM_PEER_SOCKET_H
#define IFM_PEER_SOCKET_H

#include <stdint.h>

/* The Unix-socket calls the daemon's server needs that Swift's Glibc module hides behind
 * _GNU_SOURCE (accept4, struct ucred, SO_PEERCRED, SO_PEERGROUPS). Plain structs and
 * -errno returns; no policy: who may do what is decided in Swift. */

/* Groups kept per peer; a peer in more has the rest left out (peer_groups_truncated). */
#define IFM_PEER_GROUPS_MAX 256

typedef struct ifm_peer {
    int32_t pid;
    uint32_t uid;
    uint32_t gid;
    /* Supplementary groups, then how many are valid. */
    uint32_t groups[IFM_PEER_GROUPS_MAX];
    uint32_t group_count;
    /* 1 when the peer had more groups than IFM_PEER_GROUPS_MAX. */
    uint32_t groups_truncated;
} ifm_peer;

/* accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC, so no descriptor is ever visible without them.
 * Returns the new descriptor or -errno (EAGAIN when none is waiting). */
int ifm_accept(int listen_fd);

/* The peer's credentials (SO_PEERCRED) and supplementary groups (SO_PEERGROUPS) as the kernel
 * recorded them at connect. Returns 0 or -errno. */
int ifm_peer_credentials(int fd, ifm_peer *out);

#endif
