#!/bin/bash
# ipt-world.sh DIR - the baseline design, for bench.sh to compare against:
# a second, fresh sealed world (tests/world/world.sh; its own namespaces, so
# netfilter state there cannot slow the first world) whose client namespace
# allowlists egress the classic way, from Debian packages:
#   dnsmasq (forwarder on 127.0.0.1, --ipset=/github.com/SET) adds the
#   addresses it resolves for allowed names to an ipset, and iptables OUTPUT
#   accepts loopback, the forwarder's upstream, and destinations in the set,
#   and DROPs everything else.
# Writes DIR/ready ("<client ns> <world ns>") once github.com was resolved
# through dnsmasq and a denied address was proven dropped; tears everything
# down when DIR/stop appears (bounded: 30 min) or on exit.
set -u
dir=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck disable=SC2034 # used by world.sh
HELPERS=$ROOT/build/helpers
B=$ROOT/build/bench
SET=egretbench
# shellcheck source=../world/world.sh
. "$ROOT/tests/world/world.sh"
world_up || exit 1
trap 'world_down' EXIT

nsenter --net="/run/netns/$WORLD_NS" -- "$B/acceptor" 203.0.113.10 9000 >"$dir/acc" 2>&1 &
world_exec_client sh -e -c "
	ipset create $SET hash:ip family inet
	iptables -A OUTPUT -o lo -j ACCEPT
	iptables -A OUTPUT -d $WORLD_DNS4 -p udp --dport 53 -j ACCEPT
	iptables -A OUTPUT -d $WORLD_DNS4 -p tcp --dport 53 -j ACCEPT
	iptables -A OUTPUT -m set --match-set $SET dst -j ACCEPT
	iptables -A OUTPUT -j DROP
" || exit 1
"${WORLD_IN_CLIENT[@]}" dnsmasq --keep-in-foreground --no-resolv --no-hosts \
	--server="$WORLD_DNS4" --listen-address=127.0.0.1 --bind-interfaces \
	--user=root --pid-file= --ipset=/github.com/$SET 2>"$dir/dnsmasq.err" &
for _ in $(seq 50); do
	[ "$(world_exec_client dig +short +time=1 +tries=1 @127.0.0.1 github.com A 2>/dev/null)" = 203.0.113.10 ] && break
	sleep 0.1
done
world_exec_client ipset test $SET 203.0.113.10 2>/dev/null ||
	{ echo "ipt-world: dnsmasq did not fill the ipset" >&2; exit 1; }
# Proof the DROP works: evil.test's address is not in the set.
if world_exec_client timeout 3 "$B/connbench" 203.0.113.11 80 1 >/dev/null 2>&1; then
	echo "ipt-world: 203.0.113.11:80 was not dropped" >&2; exit 1
fi
world_exec_client iptables -S OUTPUT >"$dir/rules"
echo "$WORLD_CLIENT $WORLD_NS" >"$dir/ready.tmp"
mv "$dir/ready.tmp" "$dir/ready"
for _ in $(seq 18000); do
	[ -e "$dir/stop" ] && exit 0
	sleep 0.1
done
