# Sourced by the benchmark scripts.
# make_links NAMESPACE COUNT: NAMESPACE holds COUNT links in all, loopback and veth ends a0,
# a1, …, each up with an IPv4 address; their peers b0, b1, … are up in NAMESPACE-peer with the
# address beside it, so every link can carry traffic (and has what a real link has: an
# address, a route, an IPv6 link-local address).
# send_traffic NAMESPACE COUNT: one Ethernet frame out of each a link and one out of its peer,
# so every link carries bytes both ways.
# delete_links NAMESPACE: removes both namespaces.
link_address() { local base=$(( 4 * $1 + $2 )); echo "10.$(( base >> 16 )).$(( (base >> 8) & 255 )).$(( base & 255 ))"; }
make_links() {
  local namespace=$1 count=$2 i
  ip netns add "$namespace"
  ip netns add "$namespace-peer"
  for ((i = 0; i < count - 1; i++)); do echo "link add a$i type veth peer name b$i netns $namespace-peer"; done |
    ip -n "$namespace" -batch -
  for ((i = 0; i < count - 1; i++)); do
    echo "address add $(link_address "$i" 1)/30 dev a$i"
    echo "link set a$i up"
  done | ip -n "$namespace" -batch -
  for ((i = 0; i < count - 1; i++)); do
    echo "address add $(link_address "$i" 2)/30 dev b$i"
    echo "link set b$i up"
  done | ip -n "$namespace-peer" -batch -
  ip -n "$namespace" link set lo up
}
send_traffic() {
  local namespace=$1 count=$2 side
  # Raw frames, not datagrams: IPv4 would need a neighbour entry per link, and the kernel's
  # table holds 1024 across all namespaces (gc_thresh3), so most links would carry nothing.
  for side in "$namespace:a" "$namespace-peer:b"; do
    ip netns exec "${side%:*}" python3 -c '
import socket, sys
prefix, count = sys.argv[1], int(sys.argv[2])
# A 60-byte broadcast frame of the local experimental EtherType 0x88b5.
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + b"ifmeter bench".ljust(46, b"\0")
# One socket addressed per link: closing a packet socket waits for an RCU grace period.
with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
    for i in range(count - 1):
        s.sendto(frame, (prefix + str(i), 0))
' "${side##*:}" "$count"
  done
}
delete_links() {
  ip netns delete "$1" 2>/dev/null
  ip netns delete "$1-peer" 2>/dev/null
  return 0
}
# make_containers NAMESPACE COUNT: NAMESPACE holds COUNT veth ends h0, h1, … (and loopback), up,
# each leading into a namespace of its own, NAMESPACE-c0, NAMESPACE-c1, … (bound under
# /run/netns like Podman's), whose eth0 is up: COUNT containers' host sides.
# delete_containers NAMESPACE COUNT: removes them all.
make_containers() {
  local namespace=$1 count=$2 i
  ip netns add "$namespace"
  for ((i = 0; i < count; i++)); do echo "netns add $namespace-c$i"; done | ip -batch -
  for ((i = 0; i < count; i++)); do
    echo "link add h$i type veth peer name eth0 netns $namespace-c$i"
    echo "link set h$i up"
  done | ip -n "$namespace" -batch -
  for ((i = 0; i < count; i++)); do ip -n "$namespace-c$i" link set eth0 up; done
  ip -n "$namespace" link set lo up
}
delete_containers() {
  local namespace=$1 count=$2 i
  for ((i = 0; i < count; i++)); do echo "netns delete $namespace-c$i"; done | ip -batch - 2>/dev/null
  ip netns delete "$namespace" 2>/dev/null
  return 0
}
