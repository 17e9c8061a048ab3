#!/bin/bash
# bench.sh - egret's benchmarks in the sealed test world (tests/world/world.sh).
# Never part of `make test`. Root only; builds its own namespaces and tears
# them down on exit. Traffic stays inside them (documentation ranges only).
#
#   1. connect cost: connect+close of TCP to an allowed world address,
#      interleaved rounds of: unrestricted; in an empty cgroup (no BPF);
#      inside an egret attempt (allowed by a static entry, and by one learned
#      from DNS); and the baseline design (dnsmasq ipset= +
#      iptables OUTPUT DROP + ipset match, ipt-world.sh, its own world).
#      Plus the attempt's BPF programs' own cost (run_time_ns / run_cnt).
#   2. growth: the same over IPv6 with 10, 10 000 and 65 536 (= default and
#      here the configured --max-entries, i.e. a full share) exact entries.
#   3. DNS: queries/s (32 in flight, BENCH_DNSQ distinct names) and p50/p99
#      latency (one at a time, 2000 names) for allowed and for denied names:
#      straight to an upstream (a non-logging dnsmasq in the world, port 5300),
#      through a dnsmasq forwarder in the client ns, through egret's proxy.
#   4. bulk: one large TCP upload (BENCH_MIB MiB) unrestricted vs egret vs
#      through an allowlisting HTTP CONNECT proxy (tinyproxy, FilterDefaultDeny).
#   5. launch: wall time and peak RSS of `egret run -- true`, one at a time
#      with programs loaded on the spot (--no-shared) and from the pinned
#      set, and 100 at once; egret's own set-up and BPF times (-v); the
#      kernel memory one attempt adds, and the set's, held once.
#   6. through egretd (tests/bench/egretd.sh): caller start to COMMAND
#      running, one at a time and 100 at once.
#   7. loopback: connect+close to a listener on 127.0.0.1 with an explicit
#      loopback allow, LOROUNDS interleaved rounds.
#   8. a flood of denied connects: how many decisions the log accounts for.
#   9. SNI pinning: connect + a ClientHello + close, and the bulk upload
#      after a ClientHello, to a DNS-learned address, pinning on and off
#      (--no-pinning), interleaved; the BPF programs' cost per pinned
#      connection (egret_tls included).
#  10. Host pinning: connect + a plain-HTTP GET + close, and a BENCH_MIB MiB
#      download by GET, to a DNS-learned address, pinning on and off,
#      interleaved; the BPF programs' cost per pinned connection.
#  11. accounting (issue 28): connect+close and the bulk upload with egret
#      built from the commit before per-destination accounting
#      (BENCH_ACCT_BASE) against this build, without and with an upload
#      budget, interleaved; the egress program's cost per packet of both.
#  12. peers (tests/bench/peers.sh): egret beside the control, the seed's
#      container-wide design and Anthropic's sandbox-runtime (srt): 32
#      concurrent short HTTP requests (requests/s, CPU per request), one at
#      a time (p50), start of a confined `true`, a bulk upload's CPU per
#      GiB; report_peers.py gives issue 42's targets their verdicts.
#
# BENCH_ONLY="N M ...": only those sections (the set-up always runs).
# Env: BENCH_ONLY, BENCH_ACCT_BASE (2fffbcf), BENCH_ROUNDS (15), BENCH_N connects per round (5000), BENCH_LAUNCH (30),
#      BENCH_OUT (build/bench/results). Output: $BENCH_OUT/raw.txt,
#      $BENCH_OUT/results.json, and a markdown table on stdout.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EGRET=$ROOT/build/egret
HELPERS=$ROOT/build/helpers
B=$ROOT/build/bench
ROUNDS=${BENCH_ROUNDS:-15}
LOROUNDS=${BENCH_LOROUNDS:-21}
FLOOD=${BENCH_FLOOD:-100000}
N=${BENCH_N:-5000}
LAUNCH=${BENCH_LAUNCH:-30}
MIB=${BENCH_MIB:-1024}
DNSQ=${BENCH_DNSQ:-10000}
BULKPORT=9001
OUT=${BENCH_OUT:-$B/results}
PORT=9000
V4=203.0.113.10
V6=2001:db8:2::10
MAXE=65536

[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 1; }
[ -x "$EGRET" ] && [ -x "$HELPERS/sink" ] && [ -x "$HELPERS/probe" ] ||
	{ echo "bench: run make && make helpers first" >&2; exit 1; }
mkdir -p "$B" "$OUT"
want() {	# SECTION: is it one BENCH_ONLY asks for (all when unset)?
	[ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" $1 "* ]]
}
for p in acceptor connbench spawnbench bulkbench dnsbench; do
	gcc -O2 -Wall -Wextra -o "$B/$p" "$ROOT/tests/bench/$p.c" || exit 1
done
gcc -O2 -Wall -Wextra -o "$B/fillmap" "$ROOT/tests/bench/fillmap.c" -lbpf || exit 1
# BPF run-time statistics time every program run (two clock reads each, a
# cost of their own): off while connect cost is measured, on for the
# per-program figures; restored on exit.
STATS0=$(sysctl -n kernel.bpf_stats_enabled)
stats() {
	sysctl -qw kernel.bpf_stats_enabled="$1"
}
CGROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
RAW=$OUT/raw.txt
: >"$RAW"
echo "meta connects_per_round $N" >>"$RAW"

# shellcheck source=../world/world.sh
. "$ROOT/tests/world/world.sh"
world_up || exit 1
TMP=$(mktemp -d /tmp/egret-bench.XXXXXX)
# An empty cgroup at egret's depth (cgroup4: cgroup membership, no BPF).
CGB=$CGROOT/egret-bench-$$/c
mkdir -p "$CGB" || exit 1
IPT_PID=""
cleanup() {
	if [ -n "$IPT_PID" ]; then
		: >"$TMP/ipt/stop"
		wait "$IPT_PID"
	fi
	git -C "$ROOT" worktree remove --force "$TMP/base" >/dev/null 2>&1
	world_down
	stats "$STATS0"
	rmdir "$CGB" "${CGB%/c}" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# The baseline (dnsmasq ipset= + iptables + ipset) in a world of its own.
mkdir "$TMP/ipt"
bash "$ROOT/tests/bench/ipt-world.sh" "$TMP/ipt" >"$TMP/ipt/log" 2>&1 &
IPT_PID=$!
waitfile_long() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ -e "$1" ] && return 0
		kill -0 "$IPT_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
waitfile_long "$TMP/ipt/ready" || { echo "bench: baseline world failed:" >&2; cat "$TMP/ipt/log" >&2; exit 1; }
IPT_CLIENT=$(awk '{ print $1 }' "$TMP/ipt/ready")
cp "$TMP/ipt/rules" "$OUT/baseline-iptables-rules.txt"

for a in "$V4" "$V6"; do
	nsenter --net="/run/netns/$WORLD_NS" -- "$B/acceptor" "$a" "$PORT" \
		>"$TMP/acc-$a" 2>&1 &
	disown
done
for _ in $(seq 50); do
	[ "$(cat "$TMP"/acc-* | grep -c ready)" = 2 ] && break
	sleep 0.1
done

# snap CGROUP: the programs attached to it and their stats.
# shellcheck source=progstats.sh
. "$ROOT/tests/bench/progstats.sh"

# egret_tls is attached to the set's sockhash, not to a cgroup: the same
# line for it, when CONN_EXTRA asks for ClientHellos (one attempt at a
# time runs it here).
CONN_EXTRA=()
# Several sets may be loaded on the host (other builds, suites): the one
# whose connect4 is attached to the attempt's cgroup @1 is the one.
snap_tls() {
	local cg=$1 id dir
	[ ${#CONN_EXTRA[@]} -gt 0 ] || return 0
	id=$(bpftool -j cgroup show "$cg" | jq -r '.[] | select(.name == "egret_connect4") | .id')
	for dir in /sys/fs/bpf/egret-programs/*/; do
		[ "$(bpftool -j prog show pinned "${dir}prog_egret_connect4" 2>/dev/null |
			jq -r .id)" = "$id" ] || continue
		bpftool -j prog show pinned "${dir}prog_egret_tls" | jq -r \
			'"\(.id) sk_msg \(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"'
		return 0
	done
}

waitfile() {
	local i
	for ((i = 0; i < 2000; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.01
	done
	return 1
}

# plain VARIANT ROUND ADDR: connbench outside any attempt.
plain() {
	local us
	us=$(world_exec_client "$B/connbench" "$3" "$PORT" "$N" | awk '{ print $2 }')
	[ -n "$us" ] || { echo "bench: $1 round $2 failed" >&2; return 1; }
	echo "connect $1 $2 $us" >>"$RAW"
}

# incgroup VARIANT ROUND ADDR: connbench in the empty cgroup $CGB.
incgroup() {
	local us
	us=$(world_exec_client sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" "$3" "$4" "$5"' \
		- "$CGB" "$B/connbench" "$3" "$PORT" "$N" | awk '{ print $2 }')
	[ -n "$us" ] || { echo "bench: $1 round $2 failed" >&2; return 1; }
	echo "connect $1 $2 $us" >>"$RAW"
}

# baseline VARIANT ROUND: connbench in the baseline world's client ns.
baseline() {
	local us
	us=$(nsenter --net="/run/netns/$IPT_CLIENT" -- "$B/connbench" "$V4" "$PORT" "$N" |
		awk '{ print $2 }')
	[ -n "$us" ] || { echo "bench: $1 round $2 failed" >&2; return 1; }
	echo "connect $1 $2 $us" >>"$RAW"
}

# attempt VARIANT ROUND ADDR FILL EGRET-ARGS...: connbench inside an attempt,
# with the attempt's BPF stats snapshotted just before and after it. FILL > 0:
# first grow the attempt's egret_allow6 to FILL entries (fillmap.c).
# RESOLVE=NAME: the attempt resolves NAME through egret first, so ADDR is
# allowed by a DNS-learned (expiring) entry rather than a static one.
attempt() {
	local v=$1 r=$2 addr=$3 fill=$4 d us cg pid
	shift 4
	d=$(mktemp -d "$TMP/att.XXXXXX")
	"${WORLD_IN_CLIENT[@]}" "${ATTEMPT_EGRET:-$EGRET}" run --allow-root -q \
		--dns-upstream "$WORLD_DNS" --max-entries "$MAXE" "$@" -- sh -c \
		'[ -z "$0" ] || getent ahostsv4 "$0" >/dev/null || exit 9; exec "$@"' \
		"${RESOLVE:-}" "$ROOT/tests/bench/in-attempt.sh" "$d" -- \
		"$B/connbench" "$addr" "$PORT" "$N" "${CONN_EXTRA[@]}" >"$d/out" 2>"$d/err" &
	pid=$!
	if ! waitfile "$d/cg"; then
		echo "bench: $v attempt did not start:" >&2; cat "$d/err" >&2
		kill "$pid"; wait "$pid"; return 1
	fi
	cg=$CGROOT$(cat "$d/cg")
	if [ "$fill" -gt 0 ] && ! "$B/fillmap" "/sys/fs/bpf/egret/${cg##*/}/egret_allow6" \
		"$cg" "$addr" "$fill" >"$d/fill" 2>&1; then
		cat "$d/fill" >&2; : >"$d/go1"; : >"$d/go2"; wait "$pid"; return 1
	fi
	snap "$cg" >"$d/s1"
	snap_tls "$cg" >>"$d/s1"
	: >"$d/go1"
	waitfile "$d/done"
	snap "$cg" >"$d/s2"
	snap_tls "$cg" >>"$d/s2"
	: >"$d/go2"
	wait "$pid"
	us=$(awk '{ print $2 }' "$d/out")
	[ -n "$us" ] || { echo "bench: $v round $r failed:" >&2; cat "$d/err" >&2; return 1; }
	echo "connect $v $r $us" >>"$RAW"
	join <(sort "$d/s1") <(sort "$d/s2") |
		awk -v v="$v" -v r="$r" '{ print "prog", v, r, $3, $2, $8 - $4, $9 - $5 }' >>"$RAW"
}

# The bulk uploads' receiver (sections 4, 9, 11).
nsenter --net="/run/netns/$WORLD_NS" -- "$B/bulkbench" serve "$V4" "$BULKPORT" \
	>"$TMP/bulk-serve" 2>&1 &
disown

# upload_cost LABEL EGRET EGRET-ARGS...: the bulk upload in an attempt, BPF
# stats snapshotted around it; "LABEL <egress ns> <egress runs> <MiB>
# <sender cpu µs>" into the raw file.
upload_cost() {
	local label=$1 e=$2 d pid cg
	shift 2
	d=$(mktemp -d "$TMP/upcost.XXXXXX")
	"${WORLD_IN_CLIENT[@]}" "$e" run --allow-root -q --dns-upstream "$WORLD_DNS" \
		--allow "$V4:$BULKPORT" "$@" -- "$ROOT/tests/bench/in-attempt.sh" "$d" -- \
		"$B/bulkbench" send "$V4" "$BULKPORT" "$MIB" >"$d/out" 2>"$d/err" &
	pid=$!
	waitfile "$d/cg" || { echo "bench: $label: attempt did not start" >&2; cat "$d/err" >&2; return 1; }
	cg=$CGROOT$(cat "$d/cg")
	snap "$cg" >"$d/s1"; : >"$d/go1"
	waitfile "$d/done"; snap "$cg" >"$d/s2"; : >"$d/go2"; wait "$pid"
	join <(sort "$d/s1") <(sort "$d/s2") |
		awk -v l="$label" -v mib="$MIB" -v out="$(cat "$d/out")" '$3 == "egret_egress" {
			split(out, o, " "); print l, $9 - $5, $8 - $4, mib, o[6] }' >>"$RAW"
}

echo "bench: warm-up" >&2
plain warm 0 "$V4" && plain warm 0 "$V6" || exit 1
sed -i '/^connect warm /d' "$RAW"

# --- 1. connect cost, IPv4 ----------------------------------------------------
if want 1; then
echo "bench: 1. connect cost ($ROUNDS rounds x $N connects, BPF stats off)" >&2
stats 0
baseline warm 0 || exit 1
incgroup warm 0 "$V4" || exit 1
sed -i '/^connect warm /d' "$RAW"
v1=(unrestricted4 cgroup4 egret4 egretdns4 iptables4)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < 5; k++)); do
		case ${v1[$(((k + r) % 5))]} in
		unrestricted4) plain unrestricted4 "$r" "$V4" ;;
		cgroup4) incgroup cgroup4 "$r" "$V4" ;;
		egret4) attempt egret4 "$r" "$V4" 0 --allow "$V4:$PORT" ;;
		# github.com is 203.0.113.10 in the world.
		egretdns4) RESOLVE=github.com attempt egretdns4 "$r" "$V4" 0 \
			--allow "github.com:$PORT" ;;
		iptables4) baseline iptables4 "$r" ;;
		esac || exit 1
	done
done
# Each program's own cost, stats on: the same two attempts, apart.
echo "bench: 1b. BPF programs' cost (6 rounds, BPF stats on)" >&2
stats 1
for ((r = 1; r <= 6; r++)); do
	attempt bpf-static4 "$r" "$V4" 0 --allow "$V4:$PORT" || exit 1
	RESOLVE=github.com attempt bpf-learned4 "$r" "$V4" 0 --allow "github.com:$PORT" || exit 1
done

fi
# --- 2. growth, IPv6 (the documentation prefix has room for 65 536 hosts) ----
if want 2; then
# egret takes at most 4096 static specs, so fillmap.c grows the pinned map
# from outside to N entries (N-1 fillers 2001:db8:ff:H::L, never contacted).
echo "bench: 2. growth ($ROUNDS rounds x $N connects, entries 10 10000 $MAXE, BPF stats on)" >&2
variants=(unrestricted6 e10 e10000 "e$MAXE")
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < 4; k++)); do
		v=${variants[$(((k + r) % 4))]}
		if [ "$v" = unrestricted6 ]; then
			plain "$v" "$r" "$V6" || exit 1
		else
			attempt "$v" "$r" "$V6" "${v#e}" --allow "[$V6]:$PORT" || exit 1
		fi
	done
done

fi
# --- 3. DNS ------------------------------------------------------------------------
if want 3; then
echo "bench: 3. DNS ($ROUNDS rounds)" >&2
UP=$WORLD_DNS4
nsenter --net="/run/netns/$WORLD_NS" -- dnsmasq --keep-in-foreground --no-resolv \
	--no-hosts --user=root --pid-file= --bind-interfaces --listen-address="$UP" \
	--port=5300 --address=/bench.test/203.0.113.10 --address=/denied.example/203.0.113.11 \
	>"$TMP/up.err" 2>&1 &
disown
"${WORLD_IN_CLIENT[@]}" dnsmasq --keep-in-foreground --no-resolv --no-hosts \
	--user=root --pid-file= --bind-interfaces --listen-address=127.0.0.1 \
	--server="$UP#5300" >"$TMP/fwd.err" 2>&1 &
disown
sleep 0.5
# dns VARIANT ROUND KIND(allowed|denied) MODE(qps|lat)
dns() {
	local v=$1 r=$2 kind=$3 mode=$4 suf cnt win x
	case $kind in allowed) suf=bench.test ;; denied) suf=denied.example ;; esac
	case $mode in qps) cnt=$DNSQ win=32 ;; lat) cnt=2000 win=1 ;; esac
	local a=("q$r-$mode-" "$suf" "$cnt" "$win")
	case $v in
	dns-direct) x=$(world_exec_client "$B/dnsbench" "$UP" 5300 "${a[@]}") ;;
	dns-dnsmasq) x=$(world_exec_client "$B/dnsbench" 127.0.0.1 53 "${a[@]}") ;;
	dns-egret) x=$("${WORLD_IN_CLIENT[@]}" "$EGRET" run --allow-root -q \
		--dns-upstream "$UP:5300" --allow '*.bench.test' -- \
		"$B/dnsbench" "$UP" 53 "${a[@]}" 2>/dev/null) ;;
	esac
	[ -n "$x" ] || { echo "bench: $v $kind $mode round $r failed" >&2; return 1; }
	echo "dns $v-$kind-$mode $r $x" >>"$RAW"
}
vd=(dns-direct dns-dnsmasq dns-egret)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < 3; k++)); do
		for kind in allowed denied; do
			for mode in qps lat; do
				dns "${vd[$(((k + r) % 3))]}" "$r" "$kind" "$mode" || exit 1
			done
		done
	done
done

fi
# --- 4. bulk transfer -----------------------------------------------------------
if want 4; then
echo "bench: 4. bulk ($ROUNDS rounds x $MIB MiB)" >&2
cat >"$TMP/tinyproxy.conf" <<EOT
Port 8888
Listen 127.0.0.1
Timeout 60
MaxClients 64
User nobody
Group nogroup
LogLevel Critical
LogFile "$TMP/tinyproxy.log"
Allow 127.0.0.1
ConnectPort $BULKPORT
Filter "$TMP/tinyproxy.filter"
FilterDefaultDeny Yes
EOT
echo '^203\.0\.113\.10$' >"$TMP/tinyproxy.filter"
chmod 755 "$TMP"; chmod 644 "$TMP/tinyproxy.conf" "$TMP/tinyproxy.filter"
: >"$TMP/tinyproxy.log"; chmod 666 "$TMP/tinyproxy.log"
"${WORLD_IN_CLIENT[@]}" tinyproxy -d -c "$TMP/tinyproxy.conf" >"$TMP/tinyproxy.out" 2>&1 &
disown
sleep 0.5
# The proxy must refuse what is not on its list (203.0.113.11 is evil.test).
if world_exec_client "$B/bulkbench" send 203.0.113.11 "$BULKPORT" 1 via 127.0.0.1 8888 \
	>/dev/null 2>&1; then
	echo "bench: tinyproxy let 203.0.113.11 through" >&2; exit 1
fi
bulk() {
	local v=$1 r=$2 x
	case $v in
	bulk-unrestricted) x=$(world_exec_client "$B/bulkbench" send "$V4" "$BULKPORT" "$MIB") ;;
	bulk-egret) x=$("${WORLD_IN_CLIENT[@]}" "$EGRET" run --allow-root -q \
		--dns-upstream "$WORLD_DNS" --allow "$V4:$BULKPORT" -- \
		"$B/bulkbench" send "$V4" "$BULKPORT" "$MIB") ;;
	bulk-tinyproxy) x=$(world_exec_client "$B/bulkbench" send "$V4" "$BULKPORT" "$MIB" \
		via 127.0.0.1 8888) ;;
	esac
	x=$(awk '{ print $2, $6 }' <<<"$x")
	[ -n "$x" ] || { echo "bench: $v round $r failed" >&2; return 1; }
	echo "bulk $v $r $x" >>"$RAW"
}
vb=(bulk-unrestricted bulk-egret bulk-tinyproxy)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < 3; k++)); do
		bulk "${vb[$(((k + r) % 3))]}" "$r" || exit 1
	done
done

# The same upload's BPF cost, measured directly (stats on): what the egress
# program spends per packet and per GiB, against the sender's CPU time -
# a figure that resolves far below the 1 % the rounds above cannot.
echo "bench: 4b. bulk, BPF programs' cost (5 rounds, BPF stats on)" >&2
stats 1
for ((r = 1; r <= 5; r++)); do
	upload_cost "bulkbpf $r" "$EGRET" || exit 1
done
stats 0

fi
# --- 5. launch ----------------------------------------------------------------
if want 5; then
echo "bench: 5. launch ($LAUNCH sequential, 3 x 100 concurrent)" >&2
L=("$EGRET" run --allow-root -q --dns-upstream "$WORLD_DNS" -- true)
world_exec_client "$B/spawnbench" seq 3 -- "${L[@]}" >/dev/null
world_exec_client "$B/spawnbench" seq "$LAUNCH" -- /bin/true |
	awk '{ print "launch true", $2, $4, $6, $8 }' >>"$RAW"
# Cold: the programs loaded and verified on the spot (--no-shared).
world_exec_client "$B/spawnbench" seq "$LAUNCH" -- "$EGRET" run --allow-root -q \
	--no-shared --dns-upstream "$WORLD_DNS" -- true |
	awk '{ print "launch egret-cold", $2, $4, $6, $8 }' >>"$RAW"
# Warm: the pinned set (the warm-up runs above pinned it).
world_exec_client "$B/spawnbench" seq "$LAUNCH" -- "${L[@]}" |
	awk '{ print "launch egret", $2, $4, $6, $8 }' >>"$RAW"
for r in 1 2 3; do
	world_exec_client "$B/spawnbench" conc 100 -- "${L[@]}" |
		awk -v r="$r" '{ print "conc egret", r, $4, $6, $8 }' >>"$RAW"
done
# Where the time goes: egret -v reports its set-up and BPF times.
phase() {
	sed -n 's/.*set up in \([0-9.]*\) ms (BPF programs \([0-9.]*\) ms, \([a-z ]*\)).*/phase setup \1 \2 \3/p' |
		sed 's/ the pinned set$/ shared/; s/ loaded now$/ now/' >>"$RAW"
}
for ((i = 1; i <= 10; i++)); do
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run -v --allow-root --dns-upstream "$WORLD_DNS" \
		-- true 2>&1 | phase
done
for ((i = 1; i <= 5; i++)); do
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run -v --no-shared --allow-root --dns-upstream "$WORLD_DNS" \
		-- true 2>&1 | phase
done
# Kernel memory (bpftool's memlock): what one attempt adds - its slot's
# ring buffer and repeat counts, besides its entries and two cgroup
# storages - and what the set holds once, maps and programs.
d=$(mktemp -d "$TMP/mem.XXXXXX")
"${WORLD_IN_CLIENT[@]}" "$EGRET" run --allow-root -q --dns-upstream "$WORLD_DNS" \
	--id "bench-mem-$$" -- "$ROOT/tests/bench/in-attempt.sh" "$d" -- true >/dev/null 2>&1 &
pid=$!
if waitfile "$d/cg"; then
	for m in egret_events egret_repeats; do
		bpftool -j map show pinned "/sys/fs/bpf/egret/bench-mem-$$/$m" 2>/dev/null
	done | jq -s 'map(.bytes_memlock // 0) | add' | awk '{ print "meta attempt_memlock_bytes", $1 }' >>"$RAW"
	set=$(find /sys/fs/bpf/egret-programs -mindepth 1 -maxdepth 1 -type d ! -name 'making_*' | head -n 1)
	for m in "$set"/egret_*; do
		bpftool -j map show pinned "$m" 2>/dev/null
	done | jq -s 'map(.bytes_memlock // 0) | add' | awk '{ print "meta set_maps_memlock_bytes", $1 }' >>"$RAW"
	for m in "$set"/prog_*; do
		bpftool -j prog show pinned "$m" 2>/dev/null
	done | jq -s 'map(.bytes_memlock // 0) | add' | awk '{ print "meta set_progs_memlock_bytes", $1 }' >>"$RAW"
	bpftool -j map dump pinned "$set/egret_rings" 2>/dev/null | jq length |
		awk '{ print "meta slots_made", $1 }' >>"$RAW"
fi
: >"$d/go1"; : >"$d/go2"; wait "$pid"

fi
# --- 6. through egretd ------------------------------------------------------
if want 6; then
echo "bench: 6. through egretd ($LAUNCH one at a time, 3 x 100 at once)" >&2
RAW=$RAW SEQ=$LAUNCH BURST=100 BURSTS=3 "$ROOT/tests/bench/egretd.sh" >"$OUT/egretd.md" ||
	{ echo "bench: egretd.sh failed" >&2; exit 1; }

fi
# --- 7. loopback ------------------------------------------------------------
if want 7; then
echo "bench: 7. loopback ($LOROUNDS rounds x $N connects, BPF stats off)" >&2
stats 0
world_exec_client "$B/acceptor" 127.0.0.1 "$PORT" >"$TMP/acc-lo" 2>&1 &
disown
for _ in $(seq 50); do grep -q ready "$TMP/acc-lo" && break; sleep 0.1; done
plain warm 0 127.0.0.1 || exit 1
sed -i '/^connect warm /d' "$RAW"
for ((r = 1; r <= LOROUNDS; r++)); do
	if ((r % 2)); then
		plain lo-unrestricted "$r" 127.0.0.1 && attempt lo-egret "$r" 127.0.0.1 0 --allow "127.0.0.1:$PORT"
	else
		attempt lo-egret "$r" 127.0.0.1 0 --allow "127.0.0.1:$PORT" && plain lo-unrestricted "$r" 127.0.0.1
	fi || exit 1
done

fi
# --- 8. a flood of denied connects ------------------------------------------
if want 8; then
echo "bench: 8. $FLOOD denied connects in a burst, 3 rounds" >&2
for r in 1 2 3; do
	log=$TMP/flood-$r.log
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --allow-root --dns-upstream "$WORLD_DNS" \
		--log "$log" -- "$HELPERS/probe" flood 203.0.113.11 443 "$FLOOD" >"$TMP/flood.out" 2>"$TMP/flood.err"
	lost=$(sed -n 's/^egret:   \([0-9]*\) events lost.*/\1/p' "$TMP/flood.err")
	awk -v r="$r" -v n="$FLOOD" -v lost="${lost:-0}" '
		/"addr":"203.0.113.11","port":443,/ { k = 1; if (match($0, /"repeats":[0-9]+/)) k = substr($0, RSTART + 10, RLENGTH - 10); t += k; lines++ }
		END { print "flood egret", r, n, t + 0, lines + 0, lost }' "$log" >>"$RAW"
done

fi
# --- 9. SNI pinning -----------------------------------------------------------
if want 9; then
# The connect of 1. with a ClientHello written (and sent) before the close,
# and the upload of 4. after one, to github.com's learned address: pinned
# (ports $PORT and $BULKPORT) and not (--no-pinning), interleaved.
echo "bench: 9. SNI pinning ($ROUNDS rounds: $N connects + hello, $MIB MiB upload)" >&2
PIN=$TMP/pinpol
mkdir -m 0755 "$PIN"
cat >"$PIN/policy.yaml" <<EOT
pinning: {ports: [$PORT, $BULKPORT]}
hosts: ["github.com:$PORT,$BULKPORT"]
EOT
chmod 644 "$PIN/policy.yaml"
bulkpin() {	# VARIANT ROUND EGRET-ARGS...
	local v=$1 r=$2 x
	shift 2
	x=$("${WORLD_IN_CLIENT[@]}" "$EGRET" run --allow-root -q --dns-upstream "$WORLD_DNS" \
		--policy "$PIN/policy.yaml" "$@" -- sh -c \
		'getent ahostsv4 github.com >/dev/null && exec "$@"' - \
		"$B/bulkbench" send "$V4" "$BULKPORT" "$MIB" sni github.com)
	x=$(awk '{ print $2, $6 }' <<<"$x")
	[ -n "$x" ] || { echo "bench: $v round $r failed" >&2; return 1; }
	echo "bulk $v $r $x" >>"$RAW"
}
stats 0
CONN_EXTRA=(sni github.com)
v9=(pin-on4 pin-off4 bulk-pin-on bulk-pin-off)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < 4; k++)); do
		case ${v9[$(((k + r) % 4))]} in
		pin-on4) RESOLVE=github.com attempt pin-on4 "$r" "$V4" 0 \
			--policy "$PIN/policy.yaml" ;;
		pin-off4) RESOLVE=github.com attempt pin-off4 "$r" "$V4" 0 \
			--policy "$PIN/policy.yaml" --no-pinning ;;
		bulk-pin-on) bulkpin bulk-pin-on "$r" ;;
		bulk-pin-off) bulkpin bulk-pin-off "$r" --no-pinning ;;
		esac || exit 1
	done
done
echo "bench: 9b. SNI pinning, BPF programs' cost (6 rounds, BPF stats on)" >&2
stats 1
for ((r = 1; r <= 6; r++)); do
	RESOLVE=github.com attempt bpf-pin-on4 "$r" "$V4" 0 --policy "$PIN/policy.yaml" || exit 1
	RESOLVE=github.com attempt bpf-pin-off4 "$r" "$V4" 0 --policy "$PIN/policy.yaml" \
		--no-pinning || exit 1
done
stats 0
CONN_EXTRA=()

fi
# --- 10. Host pinning ---------------------------------------------------------
if want 10; then
# The connect of 1. with a GET written (and sent) before the close, and a
# download by GET, to github.com's learned address on ports $PORT and
# $BULKPORT pinned as plain HTTP (http_ports), and not (--no-pinning).
echo "bench: 10. Host pinning ($ROUNDS rounds: $N connects + GET, $MIB MiB download)" >&2
HPIN=$TMP/httppol
mkdir -m 0755 "$HPIN"
cat >"$HPIN/policy.yaml" <<EOT
pinning: {ports: [], http_ports: [$PORT, $BULKPORT]}
hosts: ["github.com:$PORT,$BULKPORT"]
EOT
chmod 644 "$HPIN/policy.yaml"
fetchpin() {	# VARIANT ROUND EGRET-ARGS...
	local v=$1 r=$2 x
	shift 2
	x=$("${WORLD_IN_CLIENT[@]}" "$EGRET" run --allow-root -q --dns-upstream "$WORLD_DNS" \
		--policy "$HPIN/policy.yaml" "$@" -- sh -c \
		'getent ahostsv4 github.com >/dev/null && exec "$@"' - \
		"$B/bulkbench" fetch "$V4" "$BULKPORT" "$MIB" github.com)
	x=$(awk '{ print $2, $6 }' <<<"$x")
	[ -n "$x" ] || { echo "bench: $v round $r failed" >&2; return 1; }
	echo "bulk $v $r $x" >>"$RAW"
}
stats 0
CONN_EXTRA=(http github.com)
v10=(http-on4 http-off4 fetch-pin-on fetch-pin-off)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < 4; k++)); do
		case ${v10[$(((k + r) % 4))]} in
		http-on4) RESOLVE=github.com attempt http-on4 "$r" "$V4" 0 \
			--policy "$HPIN/policy.yaml" ;;
		http-off4) RESOLVE=github.com attempt http-off4 "$r" "$V4" 0 \
			--policy "$HPIN/policy.yaml" --no-pinning ;;
		fetch-pin-on) fetchpin fetch-pin-on "$r" ;;
		fetch-pin-off) fetchpin fetch-pin-off "$r" --no-pinning ;;
		esac || exit 1
	done
done
echo "bench: 10b. Host pinning, BPF programs' cost (6 rounds, BPF stats on)" >&2
stats 1
for ((r = 1; r <= 6; r++)); do
	RESOLVE=github.com attempt bpf-http-on4 "$r" "$V4" 0 --policy "$HPIN/policy.yaml" || exit 1
	RESOLVE=github.com attempt bpf-http-off4 "$r" "$V4" 0 --policy "$HPIN/policy.yaml" \
		--no-pinning || exit 1
done
stats 0
CONN_EXTRA=()

fi
# --- 11. accounting ---------------------------------------------------------
# What counting every destination's bytes costs: egret built from the
# commit before it (BENCH_ACCT_BASE) against this build - without a budget
# (counting only) and with one too large to be reached (the reserve on
# every segment) - interleaved in each round: connect+close to a static
# entry and the bulk upload; then the egress program's cost per packet of
# the upload, stats on.
if want 11; then
BASE_REV=${BENCH_ACCT_BASE:-2fffbcf}
echo "bench: 11. accounting ($ROUNDS rounds, against $BASE_REV)" >&2
if ! git -C "$ROOT" worktree add -f --detach "$TMP/base" "$BASE_REV" >/dev/null 2>&1 ||
   ! make -C "$TMP/base" -j2 build/egret >"$TMP/base.log" 2>&1; then
	echo "bench: cannot build egret at $BASE_REV (a git checkout is needed):" >&2
	tail -5 "$TMP/base.log" >&2 2>/dev/null
	exit 1
fi
BASE_EGRET=$TMP/base/build/egret
echo "meta acct_base $BASE_REV" >>"$RAW"
bulkacct() {	# VARIANT ROUND EGRET EGRET-ARGS...
	local v=$1 r=$2 e=$3 x
	shift 3
	x=$("${WORLD_IN_CLIENT[@]}" "$e" run --allow-root -q --dns-upstream "$WORLD_DNS" \
		--allow "$V4:$BULKPORT" "$@" -- "$B/bulkbench" send "$V4" "$BULKPORT" "$MIB")
	x=$(awk '{ print $2, $6 }' <<<"$x")
	[ -n "$x" ] || { echo "bench: $v round $r failed" >&2; return 1; }
	echo "bulk $v $r $x" >>"$RAW"
}
stats 0
v11=(acct-off4 acct-on4 acct-budget4 bulk-acct-off bulk-acct-on bulk-acct-budget)
for ((r = 1; r <= ROUNDS; r++)); do
	for ((k = 0; k < 6; k++)); do
		case ${v11[$(((k + r) % 6))]} in
		acct-off4) ATTEMPT_EGRET=$BASE_EGRET attempt acct-off4 "$r" "$V4" 0 \
			--allow "$V4:$PORT" ;;
		acct-on4) attempt acct-on4 "$r" "$V4" 0 --allow "$V4:$PORT" ;;
		acct-budget4) attempt acct-budget4 "$r" "$V4" 0 --allow "$V4:$PORT" \
			--upload-limit 1T ;;
		bulk-acct-off) bulkacct bulk-acct-off "$r" "$BASE_EGRET" ;;
		bulk-acct-on) bulkacct bulk-acct-on "$r" "$EGRET" ;;
		bulk-acct-budget) bulkacct bulk-acct-budget "$r" "$EGRET" --upload-limit 1T ;;
		esac || exit 1
	done
done
echo "bench: 11b. accounting, the egress program per packet of the upload (stats on)" >&2
stats 1
for ((r = 1; r <= 5; r++)); do
	upload_cost "acctbpf off $r" "$BASE_EGRET" || exit 1
	upload_cost "acctbpf on $r" "$EGRET" || exit 1
	upload_cost "acctbpf budget $r" "$EGRET" --upload-limit 1T || exit 1
done
echo "bench: 11c. accounting, every BPF program per connect+close (6 rounds, stats on)" >&2
for ((r = 1; r <= 6; r++)); do
	ATTEMPT_EGRET=$BASE_EGRET attempt bpf-acct-off4 "$r" "$V4" 0 --allow "$V4:$PORT" || exit 1
	attempt bpf-acct-on4 "$r" "$V4" 0 --allow "$V4:$PORT" || exit 1
done
stats 0
git -C "$ROOT" worktree remove --force "$TMP/base" >/dev/null 2>&1
fi

# --- 12. peers ------------------------------------------------------------------
if want 12; then
# shellcheck source=peers.sh
. "$ROOT/tests/bench/peers.sh"
fi

leftover=$(find "$CGROOT" -path '*egret/*' -type d 2>/dev/null | wc -l)
echo "meta leftover_cgroups $leftover" >>"$RAW"

python3 "$ROOT/tests/bench/report.py" "$RAW" "$OUT/results.json"
python3 "$ROOT/tests/bench/report_peers.py" "$RAW" "$OUT/results.json"
