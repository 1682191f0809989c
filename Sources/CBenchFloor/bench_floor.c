#include "CBenchFloor.h"
#include <errno.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

int ifmb_floor_open(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    return fd < 0 ? -errno : fd;
}

int ifmb_floor_dump(int fd, uint8_t *buf, size_t buf_size, uint32_t seq, uint64_t *rx_bytes_sum) {
    struct {
        struct nlmsghdr header;
        struct if_stats_msg body;
    } request = {
        .header = {
            .nlmsg_len = sizeof request,
            .nlmsg_type = RTM_GETSTATS,
            .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
            .nlmsg_seq = seq,
        },
        .body = { .family = AF_UNSPEC, .filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64) },
    };
    while (send(fd, &request, sizeof request, 0) < 0)
        if (errno != EINTR) return -errno;
    int count = 0;
    *rx_bytes_sum = 0;
    for (;;) {
        ssize_t n = recv(fd, buf, buf_size, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        int remaining = (int)n;
        for (struct nlmsghdr *hdr = (struct nlmsghdr *)buf; NLMSG_OK(hdr, remaining);
             hdr = NLMSG_NEXT(hdr, remaining)) {
            if (hdr->nlmsg_seq != seq) continue;
            if (hdr->nlmsg_type == NLMSG_DONE) return count;
            if (hdr->nlmsg_type == NLMSG_ERROR) return -EPROTO;
            int attrs_len = (int)hdr->nlmsg_len - NLMSG_LENGTH(sizeof(struct if_stats_msg));
            struct rtattr *attr = (struct rtattr *)((char *)NLMSG_DATA(hdr)
                                                    + NLMSG_ALIGN(sizeof(struct if_stats_msg)));
            for (; RTA_OK(attr, attrs_len); attr = RTA_NEXT(attr, attrs_len)) {
                if (attr->rta_type != IFLA_STATS_LINK_64) continue;
                const struct rtnl_link_stats64 *kernel = RTA_DATA(attr);
                *rx_bytes_sum += kernel->rx_bytes;
                count++;
            }
        }
    }
}
