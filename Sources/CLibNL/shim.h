#ifndef IFMETER_CLIBNL_SHIM_H
#define IFMETER_CLIBNL_SHIM_H
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/socket.h>
#include <netlink/route/link.h>
#endif
