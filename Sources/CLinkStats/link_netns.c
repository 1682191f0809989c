/* CLinkStats: which nsid this namespace gives another one (RTM_GETNSID), to match a veth's
 * IFLA_LINK_NETNSID with the namespace file its peer lives in. */
#include "CLinkStats.h"
#include "link_shared.h"

#include <errno.h>
#include <sched.h>
#include <linux/net_namespace.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>

#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

/* libnl's table of minimum sizes has no entry for NLA_S32 (it would take a 2-byte NETNSA_NSID
 * and read past it): U32 sets the minimum, and ifm_nsid_of_message checks the exact size. */
static struct nla_policy ifm_netns_policy[NETNSA_MAX + 1] = {
    [NETNSA_NSID] = { .type = NLA_U32 },
};

int ifm_nsid_of_message(struct nlmsghdr *hdr, int32_t *nsid) {
    struct nlattr *attrs[NETNSA_MAX + 1];
    if (nlmsg_parse(hdr, sizeof(struct rtgenmsg), attrs, NETNSA_MAX, ifm_netns_policy) < 0) return -EPROTO;
    if (!attrs[NETNSA_NSID] || nla_len(attrs[NETNSA_NSID]) != (int)sizeof(int32_t)) return -EPROTO;
    *nsid = (int32_t)nla_get_u32(attrs[NETNSA_NSID]);
    return 0;
}

int ifm_parse_netns_id(const void *buf, size_t len, uint32_t seq) {
    int remaining = len > INT32_MAX ? INT32_MAX : (int)len;
    for (struct nlmsghdr *hdr = (struct nlmsghdr *)buf; nlmsg_ok(hdr, remaining);
         hdr = nlmsg_next(hdr, &remaining)) {
        if (hdr->nlmsg_seq != seq) continue;
        if (hdr->nlmsg_type == NLMSG_ERROR) return ifm_nlmsg_error(hdr);
        if (hdr->nlmsg_type != RTM_NEWNSID) continue;
        int32_t nsid;
        if (ifm_nsid_of_message(hdr, &nsid) < 0) return -EPROTO;
        /* NETNSA_NSID_NOT_ASSIGNED (-1): the kernel numbers a namespace only when a link or a
         * request with NETNSA_TARGET needs it, and asking does not. */
        return nsid >= 0 ? nsid : -ENOENT;
    }
    return -EAGAIN;
}

static int ifm_netns_id_reply(const void *buf, size_t len, uint32_t seq, void *context) {
    (void)context;
    return ifm_parse_netns_id(buf, len, seq);
}

/* RTM_GETNSID naming the namespace by `attribute` (NETNSA_FD or NETNSA_PID) = `value`. */
static int ifm_nl_netns_id_by(ifm_nl *nl, int attribute, uint32_t value) {
    struct rtgenmsg header = { .rtgen_family = AF_UNSPEC };
    struct nl_msg *request = nlmsg_alloc_simple(RTM_GETNSID, NLM_F_REQUEST);
    if (!request) return -ENOMEM;
    int err = nlmsg_append(request, &header, sizeof header, NLMSG_ALIGNTO);
    if (err == 0) err = nla_put_u32(request, attribute, value);
    if (err < 0) {
        nlmsg_free(request);
        return -ifm_errno_from_nle(err);
    }
    return ifm_request_reply(nl, request, ifm_netns_id_reply, NULL);
}

int ifm_nl_netns_id(ifm_nl *nl, int netns_fd) { return ifm_nl_netns_id_by(nl, NETNSA_FD, (uint32_t)netns_fd); }

/* The kernel finds the process's namespace itself (get_net_ns_by_pid): unlike opening
 * /proc/PID/ns/net, asking takes no right to trace the process. */
int ifm_nl_netns_id_of_pid(ifm_nl *nl, int32_t pid) { return ifm_nl_netns_id_by(nl, NETNSA_PID, (uint32_t)pid); }

int ifm_enter_netns(int netns_fd) {
    /* Only the calling thread moves: sockets it opens belong to that namespace for good. */
    return setns(netns_fd, CLONE_NEWNET) == 0 ? 0 : -errno;
}
