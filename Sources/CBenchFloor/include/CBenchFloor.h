/* The benchmark's floor: the cheapest possible RTM_GETSTATS dump, on a plain netlink socket
 * with raw recv and no conversion. Only `ifmeter-bench` links it; the daemon never does. */
#ifndef CBENCHFLOOR_H
#define CBENCHFLOOR_H

#include <stddef.h>
#include <stdint.h>

/* A NETLINK_ROUTE socket; the descriptor, or -errno. */
int ifmb_floor_open(void);

/* One RTM_GETSTATS dump of every link's 64-bit stats. Returns the link count (and the sum of
 * their rx bytes, so nothing can be optimised away), or -errno. `buf` receives the replies. */
int ifmb_floor_dump(int fd, uint8_t *buf, size_t buf_size, uint32_t seq, uint64_t *rx_bytes_sum);

#endif
