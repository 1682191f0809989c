/* What the CLinkStats sources share among themselves; not part of the module's interface. */
#ifndef IFM_LINK_SHARED_H
#define IFM_LINK_SHARED_H

#include <stddef.h>

#include "CLinkStats.h"

#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <sys/types.h>

/* The kernel's struct rtnl_link_stats (32-bit) and rtnl_link_stats64 share their field names. */
#define IFM_COUNTERS_FROM(stats)                                                           \
    ((ifm_counters){                                                                       \
        .rx_bytes = (stats)->rx_bytes, .tx_bytes = (stats)->tx_bytes,                      \
        .rx_packets = (stats)->rx_packets, .tx_packets = (stats)->tx_packets,              \
        .rx_errors = (stats)->rx_errors, .tx_errors = (stats)->tx_errors,                  \
        .rx_dropped = (stats)->rx_dropped, .tx_dropped = (stats)->tx_dropped,              \
    })

/* Ensures room for `needed` elements of `size` bytes in `*items`; keeps existing contents.
 * Returns 0 or -ENOMEM. */
int ifm_reserve(void **items, size_t *capacity, size_t needed, size_t size);

/* Copies a C string into a fixed-size name field, truncated and NUL-terminated. */
void ifm_copy_name(char *dest, size_t size, const char *source);

/* One read_events call stops after this many batches so a storm cannot starve the caller. */
#define IFM_EVENT_BATCHES_PER_READ 1024

/* What a queued datagram costs its socket's receive queue beyond its bytes, at least (the
 * sk_buff and skb_shared_info headers its truesize counts: 576 bytes on x86-64). Reading until
 * the datagrams read account for a queue's size, each counted at its length plus this, reads
 * at least every datagram that was in it. */
#define IFM_SKB_OVERHEAD_MIN 512

struct ifm_nl {
    struct nl_sock *sock;
    uint8_t *buf;
    size_t buf_size;
    /* A peers socket (ifm_nl_open_events): its own namespace's messages, and other namespaces'
     * but RTM_DELLINK, are dropped unparsed. */
    int peers_only;
    /* The length of the last datagram ifm_recv_from took off the socket, whoever sent it. */
    size_t last_datagram;
};

/* The NETNSA_NSID of an RTM_NEWNSID / RTM_DELNSID message, checked against the attribute's
 * size: 0 with *nsid set, or -EPROTO. */
int ifm_nsid_of_message(struct nlmsghdr *hdr, int32_t *nsid);

/* The kernel's answer in an NLMSG_ERROR message, as -errno; -EPROTO for one cut short or one
 * that says no error where an answer was due. */
int ifm_nlmsg_error(const struct nlmsghdr *hdr);

/* Reads a request's one reply: 0 or -errno once found in `len` bytes, -EAGAIN when they hold no
 * reply to `seq` (a datagram of an abandoned earlier request). */
typedef int (*ifm_reply_parser)(const void *buf, size_t len, uint32_t seq, void *context);

/* Sends `request` (freed here) and reads until `parse` finds its reply; what `parse` returned,
 * or -errno. */
int ifm_request_reply(ifm_nl *nl, struct nl_msg *request, ifm_reply_parser parse, void *context);

/* libnl reports its own NLE_* codes; the Swift side speaks errno. */
int ifm_errno_from_nle(int nle);

/* The one place that receives: retries EINTR, drops datagrams not sent by the kernel, and
 * reports a datagram larger than the buffer as -EMSGSIZE (its contents are lost) after growing
 * the buffer for next time. Returns the byte count (0 for a datagram another process sent,
 * which is dropped) or -errno. */
ssize_t ifm_recv(ifm_nl *nl, int flags);

/* ifm_recv, also saying which namespace a notification came from: its nsid, or -1 for the
 * socket's own (see ifm_nl_open_events). */
ssize_t ifm_recv_from(ifm_nl *nl, int flags, int32_t *source_nsid);

/* Called for each reply message of a dump; returns 0 or -errno. */
typedef int (*ifm_dump_handler)(struct nlmsghdr *hdr, void *context);

/* Runs a dump until it completes uninterrupted, emptying the output before each attempt. */
int ifm_dump(ifm_nl *nl, struct nl_msg *request, ifm_dump_handler handler, void *context,
             size_t *output_count);

#endif
