#!/usr/bin/env bash
# What the soak's nemesis needs on the hosts' links (conformance/soak/): iproute2 (tc, ip) and
# iptables, installed from Debian when missing. Needs root; idempotent; touches nothing else.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "soak-deps.sh: needs root (apt-get)" >&2; exit 1; }
missing=()
command -v ip >/dev/null && command -v tc >/dev/null || missing+=(iproute2)
command -v iptables >/dev/null || missing+=(iptables)
[ "${#missing[@]}" = 0 ] && exit 0
echo "soak-deps.sh: installing ${missing[*]} (apt-get install -y)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 || true; apt-get install -y -q "${missing[@]}" >/dev/null; }
command -v iptables >/dev/null && command -v tc >/dev/null || { echo "soak-deps.sh: ${missing[*]} installed but iptables or tc not found" >&2; exit 1; }
