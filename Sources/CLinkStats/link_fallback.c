/* CLinkStats: the getifaddrs fallback, for systems where netlink is refused, and errno names. */
#include "CLinkStats.h"
#include "link_shared.h"

#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <string.h>
#include <sys/socket.h>

int ifm_getifaddrs_links(ifm_link_array *out) {
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0) return -errno;
    out->count = 0;
    int err = 0;
    for (struct ifaddrs *entry = list; entry; entry = entry->ifa_next) {
        /* glibc makes one entry per link, carrying its stats in ifa_data, with an AF_PACKET
         * address; a link without a hardware address (tun) gets a NULL ifa_addr instead.
         * Address entries (AF_INET, AF_INET6) never carry ifa_data. */
        int has_ll = entry->ifa_addr && entry->ifa_addr->sa_family == AF_PACKET;
        if (!has_ll && (entry->ifa_addr || !entry->ifa_data)) continue;
        err = ifm_reserve((void **)&out->items, &out->capacity, out->count + 1, sizeof(ifm_link));
        if (err < 0) break;
        ifm_link *link = &out->items[out->count++];
        memset(link, 0, sizeof *link);
        ifm_copy_name(link->name, sizeof link->name, entry->ifa_name);
        link->flags = entry->ifa_flags;
        link->family = AF_UNSPEC;
        link->link_netnsid = -1; /* getifaddrs does not say; 0 would be a real nsid */
        link->operstate = 0; /* IF_OPER_UNKNOWN: getifaddrs does not say */
        if (has_ll) {
            const struct sockaddr_ll *ll = (const struct sockaddr_ll *)entry->ifa_addr;
            link->ifindex = ll->sll_ifindex;
            link->arptype = ll->sll_hatype;
            link->addr_len = ll->sll_halen <= sizeof ll->sll_addr ? ll->sll_halen : sizeof ll->sll_addr;
            memcpy(link->addr, ll->sll_addr, link->addr_len);
        } else {
            link->ifindex = (int32_t)if_nametoindex(entry->ifa_name); /* 0 if it just vanished */
            link->arptype = 0xFFFF; /* ARPHRD_VOID: the type is not known */
        }
        const struct rtnl_link_stats *stats = entry->ifa_data;
        if (stats) {
            link->has_stats = 1;
            link->stats_are_32bit = 1;
            link->counters = IFM_COUNTERS_FROM(stats);
        }
    }
    freeifaddrs(list);
    return err < 0 ? err : (int)out->count;
}

const char *ifm_errno_name(int errnum) { return strerrorname_np(errnum); }
