#!/usr/bin/env bash
# Network namespaces standing in for separate hosts, for walking through docs/deploy.md on one
# machine (research/52). Root only. Every name carries a prefix so nothing else is touched.
#
#   scripts/netns/hosts.sh up   [prefix] [subnet]   # bridge <prefix>br + one namespace per host
#   scripts/netns/hosts.sh down [prefix]            # kills what runs in them, deletes them
#   scripts/netns/hosts.sh ls   [prefix]
#
# Hosts (last octet): db .10, store .20, api1 .31, api2 .32, roller .40; the root namespace is
# .1 on the bridge (the operator's workstation and the producers). Each namespace has its own
# loopback, so ports inside do not collide with anything in the root namespace.
set -euo pipefail
cmd=${1:-}
prefix=${2:-dw52}
subnet=${3:-10.252.52}
hosts=(db:10 store:20 api1:31 api2:32 roller:40)
br="${prefix}br"

up() {
  ip link add "$br" type bridge
  ip addr add "$subnet.1/24" dev "$br"
  ip link set "$br" up
  for h in "${hosts[@]}"; do
    name=${h%%:*} octet=${h##*:} ns="$prefix-${h%%:*}"
    ip netns add "$ns"
    ip link add "${prefix}v$name" type veth peer name eth0 netns "$ns"
    ip link set "${prefix}v$name" master "$br" up
    ip -n "$ns" addr add "$subnet.$octet/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route add default via "$subnet.1"
    echo "$ns $subnet.$octet"
  done
}

down() {
  for h in "${hosts[@]}"; do
    ns="$prefix-${h%%:*}"
    ip netns list | grep -qw "$ns" || continue
    pids=$(ip netns pids "$ns" || true)
    if [ -n "$pids" ]; then kill $pids 2>/dev/null || true; sleep 2; kill -9 $(ip netns pids "$ns") 2>/dev/null || true; fi
    ip netns del "$ns"
  done
  ip link del "$br" 2>/dev/null || true
}

case "$cmd" in
  up) up ;;
  down) down ;;
  ls) for h in "${hosts[@]}"; do ns="$prefix-${h%%:*}"; echo "$ns: $(ip -n "$ns" -br addr show eth0 2>/dev/null | awk '{print $3}') pids: $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"; done ;;
  *) echo "usage: $0 up|down|ls [prefix] [subnet]" >&2; exit 2 ;;
esac
