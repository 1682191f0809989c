# Sourced by the benchmark scripts: make_links NAMESPACE COUNT creates the namespace holding
# COUNT links in all (loopback plus veth pairs, and a bridge to make the count exact).
make_links() {
  local namespace=$1 count=$2 pairs i
  ip netns add "$namespace"
  pairs=$(( (count - 1) / 2 ))
  for ((i = 0; i < pairs; i++)); do echo "link add a$i type veth peer name b$i"; done |
    ip -n "$namespace" -batch -
  if (( (count - 1) % 2 )); then ip -n "$namespace" link add extra type bridge; fi
  ip -n "$namespace" link set lo up
}
