#!/bin/bash
# egretd.sh - a burst through egretd (make bench-egretd; never in make test).
#
# BURST callers (default 100) at once, each `egret run --via SOCK -- CMD` as
# the unprivileged test user, against one egretd: does every attempt start
# and exit 0, how long from each caller's start to its COMMAND running, how
# long until all are done, and what the attempts' processes hold in memory
# while all of them run. Root only; everything happens in a network
# namespace of its own with only loopback (no traffic leaves it).
#
# Env: BURST (100), BURSTS (1), SEQ callers one at a time first (0),
# each beside the same COMMAND run alone, BENCH_USER (egret-test), RAW (a
# file to append raw lines to, for tests/bench/report.py), EGRET (the
# egret whose egretd serves; build/egret), CLIENT (the callers' egret:
# EGRET, or egret-client), UIDS (attempts.uids, 61000-62023: another
# range beside a bench or suite already running on the host). Output: a
# markdown table per burst.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EGRET=${EGRET:-$ROOT/build/egret}
CLIENT=${CLIENT:-$EGRET}
BURST=${BURST:-100}
BURSTS=${BURSTS:-1}
SEQ=${SEQ:-0}
RAW=${RAW:-}
USER_=${BENCH_USER:-egret-test}
[ "$(id -u)" = 0 ] || { echo "egretd.sh: root only" >&2; exit 1; }
UID_=$(id -u "$USER_") GID_=$(id -g "$USER_") || exit 1
D=/run/egretd-bench-$$
W=$(mktemp -d /tmp/egretd-bench.XXXXXX)
# Through egretd COMMAND starts in its caller's directory, which must be
# the caller's own (launch/view.h): the callers' is theirs.
chmod 1777 "$W"
chown "$UID_:$GID_" "$W"
mkdir -m 755 "$D" || exit 1
trap 'cat "$W/egretd.err" >&2 2>/dev/null; rm -rf "$D" "$W"' EXIT

gcc -O2 -Wall -Wextra -o "$W/burst" "$ROOT/tests/bench/burst.c" || exit 1

cat >"$D/egretd.yaml" <<CONF
version: 1
socket:
  path: $D/egret.sock
  group: $GID_
attempts:
  uids: ${UIDS:-61000-62023}
  max: 1024
callers:
  - user: $USER_
CONF
chmod 644 "$D/egretd.yaml"

# One namespace for egretd and its callers (egretd serves callers in its
# own namespaces), with loopback only.
# shellcheck disable=SC2016 # expanded by the inner shell
unshare --net bash -s "$EGRET" "$D" "$W" "$BURST" "$UID_" "$GID_" "$SEQ" "$BURSTS" "$RAW" "$W/burst" "$CLIENT" <<'INNER'
EGRET=$1 D=$2 W=$3 BURST=$4 U=$5 G=$6 SEQ=$7 BURSTS=$8 RAW=$9 BURSTBIN=${10} CLIENT=${11}
ip link set lo up
"$(dirname "$EGRET")/egretd" --config "$D/egretd.yaml" 2>"$W/egretd.err" &
EPID=$!
for _ in $(seq 100); do [ -S "$D/egret.sock" ] && break; sleep 0.05; done
raw() { [ -n "$RAW" ] && echo "$*" >>"$RAW"; }
# The callers: COMMAND stamps when it runs, then (with WAIT 1) waits for
# a shared lock on $W/go, which a burst holds exclusively until all run and
# memory is read. A blocked flock costs no CPU: COMMANDs that polled a file
# (a sleep every 0.1 s each, 1000 execs a second for 100) took the CPU the
# later set-ups needed and measured the benchmark more than egretd. They
# are started by burst.c: a shell loop took 4 s to start 100.
STAMP='date +%s%N >"$1/run.$3"; [ "$2" = 1 ] && flock -s -w 120 "$1/go" true; exit 0'
callers() {	# N TAG WAIT
	"$BURSTBIN" "$1" "$U" "$G" "$W" "$2" -- "$CLIENT" run --via "$D/egret.sock" -- \
		sh -c "$STAMP" sh "$W" "$3"
}
alone() {	# TAG: the same COMMAND without egret, as the same user
	"$BURSTBIN" 1 "$U" "$G" "$W" "$1" -- sh -c "$STAMP" sh "$W" 0
}
latency() {	# TAG I: ms from the caller's start to COMMAND running
	local rc t0
	read -r rc t0 <"$W/rc.$1.$2" 2>/dev/null || return 1
	[ -e "$W/run.$1.$2" ] || return 1
	echo "$rc $(( ($(cat "$W/run.$1.$2") - t0) / 1000000 ))"
}
# One at a time, each after the same COMMAND alone: "above alone" pairs
# them (this machine's load moves both).
seq_ms=() above=()
for i in $(seq "$SEQ"); do
	alone "alone$i"
	callers 1 "seq$i" 0
	read -r _ base < <(latency "alone$i" 1) || base=
	read -r rc ms < <(latency "seq$i" 1) || continue
	raw "egretd seq $i $ms $rc"
	seq_ms+=("$ms")
	[ -n "$base" ] && above+=("$((ms - base))") && raw "egretd-alone $i $base"
done
med() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : "-" }'; }
[ "$SEQ" -gt 0 ] && echo "| one at a time ($SEQ): caller start to COMMAND running, ms p50; p50 of each minus COMMAND alone just before | $(med "${seq_ms[@]}"); $(med "${above[@]}") |"
for b in $(seq "$BURSTS"); do
	: >"$W/go"
	chmod 644 "$W/go"
	exec 9<"$W/go"
	flock 9
	start=$(date +%s%N)
	callers "$BURST" "b$b" 1 9<&- &
	bpid=$!
	# Globs, not ls | grep: the poll forks nothing beside the burst.
	shopt -s nullglob
	for _ in $(seq 3000); do
		ran=("$W"/run.b"$b".*) ended=("$W"/rc.b"$b".*)
		[ "${#ran[@]}" -ge "$BURST" ] || [ "${#ended[@]}" -ge "$BURST" ] && break
		sleep 0.02
	done
	shopt -u nullglob
	all_running=$(date +%s%N)
	# Memory while every attempt runs: egretd's processes (the accept loop
	# and one per attempt), their resident set; the attempts' maps are
	# kernel memory. And each attempt's keeper, its handler's child.
	handlers=$(pgrep -d, -P "$EPID")
	keepers=$(pgrep -d, -P "$handlers")
	read -r n rss < <(ps -o rss= -p "$EPID,$handlers" | awk '{ s += $1 } END { print NR, s + 0 }')
	read -r kn krss < <(ps -o rss= -p "$keepers" | awk '{ s += $1 } END { print NR, s + 0 }')
	# And the CPU each kind has used so far (utime + stime, their own,
	# not their ended children's), in ms per process: where the burst's
	# CPU goes. One awk over their stat files, no fork per process.
	commands=$(pgrep -d, -P "$keepers")
	clients=$(pgrep -d, -P "$(pgrep -d, -P "$bpid")")
	cpu_ms() {	# PIDS (comma-separated): ms per process
		local f=()
		for p in ${1//,/ }; do f+=("/proc/$p/stat"); done
		[ "${#f[@]}" -gt 0 ] || { echo -; return; }
		awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); s += $12 + $13; n++ }
			END { printf "%.1f", n ? s * 1000 / hz / n : 0 }' "${f[@]}" 2>/dev/null
	}
	cpu="$(cpu_ms "$clients") / $(cpu_ms "$handlers") / $(cpu_ms "$keepers") / $(cpu_ms "$commands"); the loop $(cpu_ms "$EPID")"
	exec 9<&-
	wait "$bpid"
	done_at=$(date +%s%N)
	ok=0; lat=()
	for i in $(seq "$BURST"); do
		read -r rc ms < <(latency "b$b" "$i") || continue
		[ "$rc" = 0 ] && ok=$((ok + 1))
		lat+=("$ms")
		raw "egretd burst$b $i $ms $rc"
	done
	raw "egretd-burst $b $BURST $ok $(( (all_running - start) / 1000000 )) $(( (done_at - start) / 1000000 )) $(( rss / (n > 1 ? n - 1 : 1) )) $(( krss / (kn > 0 ? kn : 1) ))"
	sorted=$(printf '%s\n' "${lat[@]}" | sort -n)
	pct() { echo "$sorted" | awk -v p="$1" '{ a[NR] = $1 } END { i = int((NR - 1) * p + 0.5) + 1; print a[i] }'; }
	echo "| through egretd, $BURST at once (burst $b) | value |"
	echo "|---|---|"
	echo "| attempts that ran COMMAND and exited 0 | $ok of $BURST |"
	echo "| caller start to COMMAND running, ms: p50 / p90 / max | $(pct 0.5) / $(pct 0.9) / $(pct 1) |"
	echo "| all $BURST COMMANDs running, ms after the first caller started | $(( (all_running - start) / 1000000 )) |"
	echo "| egretd's processes while all run: count, resident KiB total, per attempt | $n, $rss, $(( rss / (n > 1 ? n - 1 : 1) )) |"
	echo "| their keepers (COMMAND's parents): count, resident KiB total, per attempt | $kn, $krss, $(( krss / (kn > 0 ? kn : 1) )) |"
	echo "| CPU ms per process while all run: caller's egret / handler / keeper / COMMAND (its shell); egretd's loop in all | $cpu |"
	echo "| all exited, ms after the first caller started (each COMMAND waits until all run) | $(( (done_at - start) / 1000000 )) |"
done
kill "$EPID"; wait "$EPID" 2>/dev/null
grep -h . "$W"/err.* 2>/dev/null | sort | uniq -c | sort -rn | head -5 | sed 's/^/  stderr: /'
INNER
