# Sourced by the benchmark scripts.
# make_links NAMESPACE COUNT: NAMESPACE holds COUNT links in all, loopback and veth ends a0,
# a1, …, each up with an IPv4 address; their peers b0, b1, … are up in NAMESPACE-peer with the
# address beside it, so every link can carry traffic (and has what a real link has: an
# address, a route, an IPv6 link-local address).
# send_traffic NAMESPACE COUNT: one UDP datagram from each a link to its peer, so every link
# carries bytes both ways (ARP and the datagram out, ARP and the port-unreachable back).
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
  local namespace=$1 count=$2 i
  for ((i = 0; i < count - 1; i++)); do link_address "$i" 2; done |
    ip netns exec "$namespace" bash -c 'while read -r address; do echo traffic >"/dev/udp/$address/9"; done'
}
delete_links() {
  ip netns delete "$1" 2>/dev/null
  ip netns delete "$1-peer" 2>/dev/null
  return 0
}
