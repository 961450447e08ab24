#!/usr/bin/env bash
# Simulated hosts for REMIT's cross-host tests: Linux network namespaces joined to the root
# namespace by veth pairs on one private bridge. Nothing here routes anywhere else.
#
#   scripts/netns.sh up N     namespaces remit-h1..remit-hN (N in 1..32); idempotent
#   scripts/netns.sh down     remove every remit-h* namespace, their veths and the bridge; idempotent
#   scripts/netns.sh status   print the bridge and each host's address; exit 3 if the bridge is absent
#
# Layout (the only addresses these tests use, all created here, on this machine):
#   root namespace   bridge remit-br0, 10.213.0.1/24
#   host K           namespace remit-hK: lo up, eth0 = 10.213.0.(10+K)/24, the peer of remit-vK
#                    (remit-vK is enslaved to remit-br0 in the root namespace). No default route:
#                    inside a host only 10.213.0.0/24 is reachable, and 127.0.0.1 is the host's own
#                    loopback, not the root namespace's.
# IP forwarding is not touched (the root namespace routes nothing between the bridge and eth0).
# Needs root and iproute2 (installed with apt-get when missing).
set -euo pipefail

BRIDGE=remit-br0
BRIDGE_ADDR=10.213.0.1/24
NET_PREFIX=10.213.0
HOST_BASE=10
MAX_HOSTS=32

die() { echo "netns.sh: $*" >&2; exit 1; }

need_root() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces, veth pairs and a bridge); run as root, or set REMIT_SKIP_NETNS=1 to skip the cross-host tests"
}

ensure_iproute2() {
  command -v ip >/dev/null && return 0
  echo "netns.sh: installing iproute2 (apt-get install -y iproute2)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q iproute2 >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 || true; apt-get install -y -q iproute2 >/dev/null; }
  command -v ip >/dev/null || die "iproute2 installed but 'ip' not found"
}

host_ns() { echo "remit-h$1"; }
host_veth() { echo "remit-v$1"; }
host_addr() { echo "$NET_PREFIX.$((HOST_BASE + $1))"; }

ensure_bridge() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
  fi
  if ! ip -4 addr show dev "$BRIDGE" | grep -q "inet $BRIDGE_ADDR "; then
    ip addr add "$BRIDGE_ADDR" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
}

# True when host K is fully set up: namespace, eth0 with its address and up, lo up, root veth on the bridge.
host_ok() {
  local k="$1" ns veth
  ns="$(host_ns "$k")"; veth="$(host_veth "$k")"
  ip netns list 2>/dev/null | grep -qw "^$ns" || return 1
  ip link show "$veth" 2>/dev/null | grep -q "master $BRIDGE" || return 1
  ip link show "$veth" 2>/dev/null | grep -q "state UP\|LOWER_UP" || return 1
  ip netns exec "$ns" ip -4 addr show dev eth0 2>/dev/null | grep -q "inet $(host_addr "$k")/24" || return 1
  ip netns exec "$ns" ip link show lo 2>/dev/null | grep -q "UP" || return 1
}

remove_host() {
  local k="$1"
  ip netns del "$(host_ns "$k")" 2>/dev/null || true
  ip link del "$(host_veth "$k")" 2>/dev/null || true
}

create_host() {
  local k="$1" ns veth peer
  ns="$(host_ns "$k")"; veth="$(host_veth "$k")"; peer="remit-p$k"
  remove_host "$k"
  ip link del "$peer" 2>/dev/null || true
  ip netns add "$ns"
  ip link add "$veth" type veth peer name "$peer"
  ip link set "$peer" netns "$ns"
  ip netns exec "$ns" ip link set "$peer" name eth0
  ip netns exec "$ns" ip addr add "$(host_addr "$k")/24" dev eth0
  ip netns exec "$ns" ip link set lo up
  ip netns exec "$ns" ip link set eth0 up
  ip link set "$veth" master "$BRIDGE"
  ip link set "$veth" up
}

cmd_up() {
  local n="${1:-}"
  case "$n" in ''|*[!0-9]*) die "usage: netns.sh up N (N a number, 1..$MAX_HOSTS)";; esac
  [ "$n" -ge 1 ] && [ "$n" -le "$MAX_HOSTS" ] || die "N must be in 1..$MAX_HOSTS, got $n"
  need_root
  ensure_iproute2
  ensure_bridge
  local k
  for k in $(seq 1 "$n"); do
    host_ok "$k" || create_host "$k"
    host_ok "$k" || die "host $k ($(host_ns "$k")) is not up after creating it"
  done
  echo "netns.sh: $n host(s) up: $(host_ns 1)..$(host_ns "$n") at $(host_addr 1)..$(host_addr "$n"), bridge $BRIDGE $BRIDGE_ADDR" >&2
}

cmd_down() {
  need_root
  command -v ip >/dev/null || return 0
  local ns k
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^remit-h[0-9]+$' || true); do
    k="${ns#remit-h}"
    remove_host "$k"
  done
  # Root-side veths whose namespace vanished some other way.
  for veth in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E '^remit-v[0-9]+$' || true); do
    ip link del "$veth" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  echo "netns.sh: down (no remit-h* namespaces, no $BRIDGE)" >&2
}

cmd_status() {
  command -v ip >/dev/null || { echo "iproute2 not installed"; return 3; }
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then echo "no bridge $BRIDGE"; return 3; fi
  echo "bridge $BRIDGE $(ip -4 -o addr show dev "$BRIDGE" | awk '{print $4}')"
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^remit-h[0-9]+$' | sort -V || true); do
    echo "$ns $(ip netns exec "$ns" ip -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}')"
  done
}

# One change at a time: two test runs bringing hosts up together must not interleave.
exec 9>>/run/remit-netns.lock
flock -w 60 9 || die "could not lock /run/remit-netns.lock"

case "${1:-}" in
  up) cmd_up "${2:-}" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: scripts/netns.sh up N|down|status" >&2; exit 2 ;;
esac
