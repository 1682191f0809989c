# Sourced by the container tests. await SECONDS COMMAND...: runs COMMAND until it succeeds,
# every 0.1 s, and returns 1 once SECONDS have passed without; the caller's `|| fail "..."` says
# which step was still waiting. The ceilings are generous: systemd boots a container in 3 s on
# an idle machine and in over a minute on two cores shared with the rest of the test suite.
await() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
}

# The container's systemd (a child of systemd-nspawn $nspawn), into $container.
container_started() { container=$(pgrep -P "$nspawn" -x systemd || true); [ -n "$container" ]; }

# Booted: `systemctl is-system-running` says running or degraded; its word is left in $state.
booted() {
  state=$(inside systemctl is-system-running 2>/dev/null || true)
  case "$state" in running|degraded) return 0 ;; *) return 1 ;; esac
}

# ifmeterd.service is active; its state is left in $active.
service_active() {
  active=$(inside systemctl is-active ifmeterd.service 2>/dev/null || true)
  [ "$active" = active ]
}

gone() { ! kill -0 "$1" 2>/dev/null; }
