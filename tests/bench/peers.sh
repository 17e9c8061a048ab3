# peers.sh - section 12 of bench.sh (sourced; its world, baseline world and
# helpers): egret beside what a user would pick instead, the same world,
# allowlist and load for each, interleaved in every round:
#   control  unconfined, in the world's client namespace;
#   egret    `egret run --allow 203.0.113.10:PORTS` (static entries);
#   seed     the container-wide design egret replaces: dnsmasq ipset= +
#            iptables OUTPUT DROP (ipt-world.sh), its own world;
#   srt      Anthropic's sandbox-runtime (npm, SRT_VERSION), bubblewrap
#            with no network and its HTTP proxy on the host side, allowing
#            github.com (203.0.113.10 in a mount namespace's /etc/hosts,
#            so the proxy's lookups never leave the machine).
# Rows: http32 - httpbench.c, 32 connections in flight over 2 processes,
# a new one per request, against httpd.c (2 processes: client and server
# can use both CPUs, so what a variant adds shows as lost requests/s):
# requests/s and the machine's CPU per 1000;
# http1 - the same one at a time: p50 of connect+GET+close; start - wall
# of a confined `true` (spawnbench, one after another); bulk - one
# $PEER_MIB MiB upload (bulkbench), the machine's CPU per GiB.
# Raw lines: "peer ROW VARIANT ROUND KEY VALUE ..."; report_peers.py
# turns them into the table and issue 42's verdicts. A variant that
# cannot be set up prints one "peer-missing VARIANT why" line, and its
# column says so.
# SC2154: bench.sh sets the world's names. SC2016: $0 and $@ belong to the child shell.
# shellcheck shell=bash disable=SC2154,SC2016

PEER_ROUNDS=${BENCH_PEER_ROUNDS:-7}
PEER_N32=${BENCH_HTTP_N:-20000}
PEER_N1=${BENCH_HTTP_N1:-2000}
PEER_START=${BENCH_PEER_START:-10}
PEER_MIB=${BENCH_PEER_MIB:-256}
HTTPPORT=9002
SRT_VERSION=0.0.78
SRT=$B/srt/node_modules/.bin/srt

gcc -O2 -Wall -Wextra -o "$B/httpbench" "$ROOT/tests/bench/httpbench.c" || exit 1
gcc -O2 -Wall -Wextra -o "$B/httpd" "$ROOT/tests/bench/httpd.c" || exit 1

IPT_WORLD=$(awk '{ print $2 }' "$TMP/ipt/ready")
for ns in "$WORLD_NS" "$IPT_WORLD"; do
	nsenter --net="/run/netns/$ns" -- "$B/httpd" "$V4" "$HTTPPORT" 2 >"$TMP/httpd-$ns" 2>&1 &
	disown
done
nsenter --net="/run/netns/$IPT_WORLD" -- "$B/bulkbench" serve "$V4" "$BULKPORT" \
	>"$TMP/bulk-serve-ipt" 2>&1 &
disown
for _ in $(seq 50); do
	[ "$(cat "$TMP"/httpd-* | grep -c ready)" = 2 ] && break
	sleep 0.1
done

# srt: installed by the bench itself (never part of make test); the proxy
# resolves github.com from the hosts file below, in a mount namespace of
# its own, so no lookup leaves the world.
PEERS=(control egret seed srt)
srt_ok=1
if [ ! -x "$SRT" ] || [ "$("$SRT" --version 2>/dev/null)" != "$SRT_VERSION" ]; then
	mkdir -p "$B/srt"
	npm install --prefix "$B/srt" --no-audit --no-fund --silent \
		"@anthropic-ai/sandbox-runtime@$SRT_VERSION" >"$TMP/srt-install" 2>&1 || srt_ok=0
fi
for tool in bwrap socat; do
	command -v "$tool" >/dev/null || { srt_ok=0; echo "$tool missing" >>"$TMP/srt-install"; }
done
cat >"$TMP/srt.json" <<EOT
{ "network": { "allowedDomains": ["github.com", "203.0.113.10"], "deniedDomains": [] },
  "filesystem": { "denyRead": [], "allowWrite": ["$TMP"], "denyWrite": [] } }
EOT
printf '127.0.0.1 localhost\n203.0.113.10 github.com\n' >"$TMP/srt-hosts"
# in_srt CMD...: CMD through srt; in the sandbox, $HTTP_PROXY names its proxy.
in_srt() {
	"${WORLD_IN_CLIENT[@]}" unshare -m sh -c \
		'mount --bind "$0" /etc/hosts && exec "$@"' "$TMP/srt-hosts" \
		"$SRT" --settings "$TMP/srt.json" -- "$@"
}
# In the sandbox, httpbench and bulkbench go through the proxy that
# $HTTP_PROXY names, with its credentials (proxy_env.h).
if [ "$srt_ok" = 1 ] && ! in_srt "$B/httpbench" -x - - 1 1 "github.com:$HTTPPORT" \
	>"$TMP/srt-check" 2>&1; then
	srt_ok=0
fi
if [ "$srt_ok" = 0 ]; then
	why=$(cat "$TMP/srt-install" "$TMP/srt-check" 2>/dev/null | grep . | tail -1 | cut -c1-160)
	echo "peer-missing srt ${why:-its check request failed}" >>"$RAW"
	PEERS=(control egret seed)
	echo "bench: 12. srt could not be set up; its column says why" >&2
fi
# The proxy peer refuses what is not allowed, as the others do.
if [ "$srt_ok" = 1 ] && in_srt "$B/httpbench" -x - - 1 1 "evil.test:$HTTPPORT" \
	>/dev/null 2>&1; then
	echo "bench: srt let evil.test through" >&2; exit 1
fi

# busy: the machine's busy CPU so far, in ticks (all but idle and iowait).
busy() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat
}
# peer_cmd VARIANT CMD...: CMD confined as VARIANT confines it.
peer_cmd() {
	local v=$1
	shift
	case $v in
	control) world_exec_client "$@" ;;
	egret) "${WORLD_IN_CLIENT[@]}" "$EGRET" run --allow-root -q --dns-upstream "$WORLD_DNS" \
		--allow "$V4:$HTTPPORT" --allow "$V4:$BULKPORT" -- "$@" ;;
	seed) nsenter --net="/run/netns/$IPT_CLIENT" -- "$@" ;;
	srt) in_srt "$@" ;;
	esac
}
# peer_http VARIANT ROUND ROW C N: srt makes N/SRT_DIV requests (a
# hundred times slower per request, it would take the run's hour alone).
SRT_DIV=20
peer_http() {
	local v=$1 r=$2 row=$3 c=$4 n=$5 x procs=2
	[ "$c" -gt 1 ] || procs=1
	if [ "$v" = srt ]; then
		x=$(peer_cmd srt "$B/httpbench" -p "$procs" -x - - "$c" $((n / SRT_DIV > c ? n / SRT_DIV : c)) \
			"github.com:$HTTPPORT")
	else
		x=$(peer_cmd "$v" "$B/httpbench" -p "$procs" "$V4" "$HTTPPORT" "$c" "$n" \
			"github.com:$HTTPPORT")
	fi
	[ -n "$x" ] || { echo "bench: 12. $row $v round $r failed" >&2; return 1; }
	echo "peer $row $v $r $x" >>"$RAW"
}
# peer_start VARIANT ROUND: a confined `true`, PEER_START times.
peer_start() {
	local v=$1 r=$2 ms
	case $v in
	control | seed) ms=$(peer_cmd "$v" "$B/spawnbench" seq "$PEER_START" -- true) ;;
	egret) ms=$(world_exec_client "$B/spawnbench" seq "$PEER_START" -- "$EGRET" run \
		--allow-root -q --dns-upstream "$WORLD_DNS" --allow "$V4:$HTTPPORT" -- true) ;;
	srt) ms=$(world_exec_client "$B/spawnbench" seq "$PEER_START" -- unshare -m sh -c \
		'mount --bind "$0" /etc/hosts && exec "$@"' "$TMP/srt-hosts" \
		"$SRT" --settings "$TMP/srt.json" -- true) ;;
	esac
	ms=$(awk '$8 == 0 { print $4 }' <<<"$ms" | sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }')
	[ -n "$ms" ] || { echo "bench: 12. start $v round $r failed" >&2; return 1; }
	echo "peer start $v $r wall_ms $ms" >>"$RAW"
}
# peer_bulk VARIANT ROUND: the upload, and the machine's CPU it took.
peer_bulk() {
	local v=$1 r=$2 x b0 b1
	b0=$(busy)
	if [ "$v" = srt ]; then
		x=$(peer_cmd srt "$B/bulkbench" send "$V4" "$BULKPORT" "$PEER_MIB" via-env)
	else
		x=$(peer_cmd "$v" "$B/bulkbench" send "$V4" "$BULKPORT" "$PEER_MIB")
	fi
	b1=$(busy)
	x=$(awk '{ print "mib_s", $2 }' <<<"$x")
	[ -n "$x" ] || { echo "bench: 12. bulk $v round $r failed" >&2; return 1; }
	echo "peer bulk $v $r $x cpu_ms_per_gib $(((b1 - b0) * 1000 * 1024 / ($(getconf CLK_TCK) * PEER_MIB)))" >>"$RAW"
}

echo "bench: 12. peers: ${PEERS[*]} ($PEER_ROUNDS rounds)" >&2
stats 0
for v in "${PEERS[@]}"; do	# warm-up, not recorded
	peer_http "$v" 0 warm 32 2000 && peer_start "$v" 0 || exit 1
done
sed -i '/^peer [a-z0-9]* [a-z]* 0 /d' "$RAW"
np=${#PEERS[@]}
for ((r = 1; r <= PEER_ROUNDS; r++)); do
	for ((k = 0; k < np; k++)); do
		v=${PEERS[$(((k + r) % np))]}
		peer_http "$v" "$r" http32 32 "$PEER_N32" || exit 1
		peer_http "$v" "$r" http1 1 "$PEER_N1" || exit 1
		peer_start "$v" "$r" || exit 1
		peer_bulk "$v" "$r" || exit 1
	done
done
