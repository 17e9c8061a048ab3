#!/bin/bash
# http_bodies.sh - what the egress program costs per packet of an upload on
# a Host-pinned port (BENCHMARKS.md, "Host pinning: uploads"). Not a test.
#
#   tests/bench/http_bodies.sh [BASE_EGRET]
#
# In the sealed test world (tests/world/world.sh), bulkbench serve reads
# each connection to its end on 203.0.113.10:81, pinned as plain HTTP by a
# policy (`http_ports: [81]`). Inside an attempt, one connection sends a
# POST for github.com of BENCH_MIB MiB of random bytes: counted
# (Content-Length) or chunked (64 KiB chunks). The egress program's
# run_cnt and run_time_ns (BPF stats on) are read before and after the
# upload, as bench.sh's section 11 does. Each round, interleaved: this
# build counted, chunked, and counted with --no-pinning, and BASE_EGRET
# (an egret built before, when given) counted. Prints one line per run.
# SC2015: A && B || C is meant. SC2016: $@ belongs to the child shell.
# shellcheck disable=SC2015,SC2016
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EGRET=${EGRET:-$ROOT/build/egret}
HELPERS=${HELPERS:-$ROOT/build/helpers}
BASE=${1:-}
MIB=${BENCH_MIB:-64}
ROUNDS=${BENCH_ROUNDS:-9}
PORT=81
V4=203.0.113.10

[ "$(id -u)" = 0 ] || { echo "http_bodies: needs root" >&2; exit 1; }
[ -x "$EGRET" ] && [ -x "$HELPERS/sink" ] || { echo "http_bodies: run make && make helpers first" >&2; exit 1; }
TMP=$(mktemp -d /tmp/egret-http-bodies.XXXXXX)
chmod 755 "$TMP"
gcc -O2 -Wall -Wextra -o "$TMP/bulkbench" "$ROOT/tests/bench/bulkbench.c" || exit 1
cat >"$TMP/client.py" <<'EOF'
import os, socket, sys
addr, port, mib, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
block = os.urandom(65536)
s = socket.create_connection((addr, port))
head = b"POST /up HTTP/1.1\r\nHost: github.com\r\n"
if kind == "counted":
    s.sendall(head + b"Content-Length: %d\r\n\r\n" % (mib * 16 * len(block)))
    for _ in range(mib * 16):
        s.sendall(block)
else:
    s.sendall(head + b"Transfer-Encoding: chunked\r\n\r\n")
    for _ in range(mib * 16):
        s.sendall(b"10000\r\n" + block + b"\r\n")
    s.sendall(b"0\r\n\r\n")
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
print("ok")
EOF
cat >"$TMP/policy.yaml" <<EOF
pinning: {ports: [], http_ports: [$PORT]}
hosts: ["github.com:$PORT"]
EOF
chmod 644 "$TMP/policy.yaml" "$TMP/client.py"
STATS0=$(sysctl -n kernel.bpf_stats_enabled)
CGROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
# shellcheck source=../world/world.sh
. "$ROOT/tests/world/world.sh"
world_up || exit 1
SRV=""
trap '[ -n "$SRV" ] && kill "$SRV"; world_down; sysctl -qw kernel.bpf_stats_enabled="$STATS0"; rm -rf "$TMP"' EXIT
nsenter --net="/run/netns/$WORLD_NS" -- "$TMP/bulkbench" serve "$V4" "$PORT" &
SRV=$!

# shellcheck source=progstats.sh
. "$ROOT/tests/bench/progstats.sh"
waitfile() {
	local _
	for _ in $(seq 1000); do
		[ -e "$1" ] && return 0
		sleep 0.01
	done
	return 1
}
upload() {	# LABEL EGRET KIND EGRET-ARGS...
	local l=$1 e=$2 k=$3 d pid cg
	shift 3
	d=$(mktemp -d "$TMP/u.XXXXXX")
	"${WORLD_IN_CLIENT[@]}" "$e" run --allow-root -q --dns-upstream "$WORLD_DNS" \
		--policy "$TMP/policy.yaml" "$@" -- "$ROOT/tests/bench/in-attempt.sh" "$d" -- \
		sh -c 'getent ahostsv4 github.com >/dev/null && exec "$@"' - \
		python3 "$TMP/client.py" "$V4" "$PORT" "$MIB" "$k" >"$d/out" 2>"$d/err" &
	pid=$!
	waitfile "$d/cg" || { echo "http_bodies: $l: no attempt" >&2; cat "$d/err" >&2; return 1; }
	cg=$CGROOT$(cat "$d/cg")
	snap "$cg" >"$d/s1"
	: >"$d/go1"
	waitfile "$d/done"
	snap "$cg" >"$d/s2"
	: >"$d/go2"
	wait "$pid"
	[ "$(cat "$d/out")" = ok ] || { echo "http_bodies: $l: upload failed" >&2; cat "$d/err" >&2; return 1; }
	join <(sort "$d/s1") <(sort "$d/s2") | awk -v l="$l" '$3 == "egret_egress" {
		n = $8 - $4; printf "%s runs=%d ns=%d ns_per_run=%.1f\n", l, n, $9 - $5, ($9 - $5) / n }'
}

sysctl -qw kernel.bpf_stats_enabled=1
for ((r = 1; r <= ROUNDS; r++)); do
	upload counted "$EGRET" counted || exit 1
	upload chunked "$EGRET" chunked || exit 1
	upload unpinned "$EGRET" counted --no-pinning || exit 1
	[ -z "$BASE" ] || upload base-counted "$BASE" counted || exit 1
done
