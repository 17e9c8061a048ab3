#!/bin/bash
# ab.sh EGRET_A EGRET_B - two egret builds side by side: the BPF programs'
# own cost (bpf_stats: run_time_ns / run_cnt) and connect+close time,
# interleaved A B B A ... per round, with a static and a DNS-learned allow
# entry, inside the sealed test world. Prints medians over rounds and the
# per-round paired ratios B/A. Not part of make test or make bench.
#   tests/bench/ab.sh /tmp/base/build/egret build/egret
# Env: ROUNDS (8) per half (stats on, then off), N connects per run (5000).
# SC2015: A && B || C is meant. SC2016: $0 and $@ belong to the child shell.
# shellcheck disable=SC2015,SC2016
set -u
[ $# = 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: $0 EGRET_A EGRET_B" >&2; exit 2; }
A=$(readlink -f "$1") BB=$(readlink -f "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
HELPERS=$ROOT/build/helpers
export HELPERS
B=$ROOT/build/bench
mkdir -p "$B"
for p in acceptor connbench; do gcc -O2 -o "$B/$p" tests/bench/$p.c || exit 1; done
# shellcheck source=tests/world/world.sh
. tests/world/world.sh
world_up >/dev/null 2>&1 || { echo world; exit 1; }
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
nsenter --net="/run/netns/$WORLD_NS" -- "$B/acceptor" 203.0.113.10 9000 >/dev/null 2>&1 &
ACC=$!
sleep 0.5
RAW=$B/ab.raw; : >"$RAW"
N=${N:-5000}
# shellcheck source=tests/bench/progstats.sh
. tests/bench/progstats.sh
one() {	# LABEL EGRET KIND ROUND
	local d us cg pid
	d=$(mktemp -d "$B/ab.XXXXXX")
	local args=(--allow 203.0.113.10:9000) res=""
	[ "$3" = learned ] && args=(--allow github.com:9000) res=github.com
	"${WORLD_IN_CLIENT[@]}" "$2" run --allow-root -q --dns-upstream "$WORLD_DNS" \
		"${args[@]}" -- sh -c '[ -z "$0" ] || getent ahostsv4 "$0" >/dev/null || exit 9; exec "$@"' \
		"$res" "$ROOT/tests/bench/in-attempt.sh" "$d" -- "$B/connbench" 203.0.113.10 9000 "$N" \
		>"$d/out" 2>"$d/err" &
	pid=$!
	for _ in $(seq 1000); do [ -e "$d/cg" ] && break; sleep 0.01; done
	cg=$CGROOT$(cat "$d/cg")
	snap "$cg" >"$d/s1"; : >"$d/go1"
	for _ in $(seq 3000); do [ -e "$d/done" ] && break; sleep 0.01; done
	snap "$cg" >"$d/s2"; : >"$d/go2"; wait "$pid"
	us=$(awk '{ print $2 }' "$d/out")
	echo "connect $1-$3 $4 $us" >>"$RAW"
	join <(sort "$d/s1") <(sort "$d/s2") |
		awk -v v="$1-$3" -v r="$4" '{ if ($8 > $4) print "prog", v, r, $3, ($9 - $5) / ($8 - $4), $8 - $4 }' >>"$RAW"
	rm -rf "$d"
}
for stats in 1 0; do
	sysctl -qw kernel.bpf_stats_enabled=$stats
	for r in $(seq "${ROUNDS:-8}"); do
		for k in static learned; do
			if [ $((r % 2)) = 0 ]; then
				one A "$A" $k "$stats.$r"; one B "$BB" $k "$stats.$r"
			else
				one B "$BB" $k "$stats.$r"; one A "$A" $k "$stats.$r"
			fi
		done
	done
done
sysctl -qw kernel.bpf_stats_enabled=0
kill $ACC
world_down
echo "== BPF ns per run (stats on), median over rounds"
awk '$1 == "prog" && $3 ~ /^1\./ { k = $2 " " $4; v[k] = v[k] " " $5 } END { for (k in v) print k, v[k] }' "$RAW" |
	while read -r var name vals; do
		m=$(echo "$vals" | tr ' ' '\n' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
		printf '%-16s %-20s %8.0f\n' "$var" "$name" "$m"
	done | sort
echo "== connect+close us (stats off), median over rounds"
awk '$1 == "connect" && $3 ~ /^0\./ { v[$2] = v[$2] " " $4 } END { for (k in v) print k, v[k] }' "$RAW" |
	while read -r var vals; do
		m=$(echo "$vals" | tr ' ' '\n' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
		printf '%-16s %8.2f\n' "$var" "$m"
	done | sort
echo "== paired ratios B/A per round (stats off): static, learned"
for k in static learned; do
	awk -v k="$k" '$1 == "connect" && $3 ~ /^0\./ { v[$2, $3] = $4; r[$3] = 1 }
		END { for (x in r) if (v["A-" k, x] > 0) printf "%.3f\n", v["B-" k, x] / v["A-" k, x] }' "$RAW" |
		sort -n | tr '\n' ' '
	echo
done
