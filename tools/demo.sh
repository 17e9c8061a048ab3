#!/usr/bin/env bash
# demo.sh - `sudo make demo`: one attempt in a sealed, offline world.
#
# Builds two network namespaces (tests/world/world.sh) with a "world" that
# listens on a few documentation addresses, then runs a pretend agent under
# egret that may reach 203.0.113.10:80 and nothing else. Shows egret's own
# output, what the agent saw, what the world received, and that a process
# outside the attempt (the miner) is not restricted.
set -u
cd "$(dirname "$0")/.."
: "${EGRET:=$PWD/build/egret}" "${HELPERS:=$PWD/build/helpers}"
export HELPERS

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (network namespaces, cgroups, BPF): sudo make demo" >&2
	exit 1
fi
# shellcheck source=../tests/world/world.sh
. tests/world/world.sh
world_up || { echo "demo: could not build the demo world" >&2; exit 1; }

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "egret run --user nobody --allow 203.0.113.10:80 -- agent"
world_exec_client "$EGRET" run -v --user nobody --id demo-$$ \
	--allow 203.0.113.10:80 -- sh -c '
	p() { "$probe" "$@" 2>/dev/null; }; probe=$1
	echo "[agent] whoami: $(id -un), cgroup $(cut -d: -f3 /proc/self/cgroup | tail -n1)"
	printf "[agent] connect 203.0.113.10:80  (allowed)     -> "; p tcp 203.0.113.10 80 GET-allowed
	printf "[agent] connect 203.0.113.10:443 (wrong port)  -> "; p tcp 203.0.113.10 443 GET-wrong-port
	printf "[agent] connect 198.51.100.7:80  (not allowed) -> "; p tcp 198.51.100.7 80 exfiltrate
	printf "[agent] udp     198.51.100.7:9999(not allowed) -> "; p udp 198.51.100.7 9999 exfiltrate-udp
	printf "[agent] connect 127.0.0.1:8081   (loopback)    -> "; p tcp 127.0.0.1 8081 loopback
	exit 0' agent "$HELPERS/probe"
echo "[egret] exit status $?"

say "meanwhile the miner, outside the attempt, connects to 198.51.100.7:80"
printf "[miner] -> "
world_exec_client "$HELPERS/probe" tcp 198.51.100.7 80 miner-is-free

say "what the world received (its own log)"
sleep 0.2
grep -v '^ready' "$WORLD_LOG" | grep -v world-check || true

say "left behind: cgroups, pins, records"
find /sys/fs/bpf/egret /run/egret "$(grep -m1 ' - cgroup2 ' /proc/self/mountinfo | cut -d' ' -f5)" \
	-name "demo-$$" 2>/dev/null | grep . || echo "nothing"

