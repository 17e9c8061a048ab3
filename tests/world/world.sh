# shellcheck shell=bash
# world.sh - a sealed two-namespace network for egret's integration tests.
#
# Source it, then call world_up. It builds:
#
#   client ns  egw-<pid>-c           world ns  egw-<pid>-w
#   lo (up, 127.0.0.1, ::1)          lo: 203.0.113.10 203.0.113.11 198.51.100.7
#                                        203.0.113.100 203.0.113.199
#                                        203.0.113.20-25 (catalog hosts)
#                                        2001:db8:2::10 2001:db8:2::11
#                                        DNS: 198.51.100.53 2001:db8:2::53
#   veth 192.0.2.2/24  <---------->  veth 192.0.2.1/24
#        2001:db8:1::2/64                 2001:db8:1::1/64
#
# The client routes only the world's prefixes (203.0.113.0/24,
# 198.51.100.0/24, 2001:db8:2::/64) via the world, and has no default route;
# the world has no interface but lo and the veth. Nothing can leave.
#
# A sink (tests/helpers/sink.c) in the world listens on every world address,
# TCP 22 80 443 8080 and UDP 5353 9999, logging to $WORLD_LOG. A second sink in
# the client ns listens on loopback (TCP+UDP 127.0.0.1:8081 and [::1]:8081)
# and on every address of the client (TCP+UDP 0.0.0.0:8082 and [::]:8082,
# TCP 0.0.0.0:8083:
# a service of the host, reached through its own interface addresses),
# logging to $WORLD_LO_LOG, for the loopback and host-address tests.
#
# A DNS server (dnsmasq) in the world answers on $WORLD_DNS4 / $WORLD_DNS6
# port 53, UDP and TCP, for the names below only (no upstream of its own),
# and logs every query it receives to $WORLD_DNS_LOG: the proof of what
# reached it. TTL 600 unless noted.
#
#   github.com          A 203.0.113.10, AAAA 2001:db8:2::10
#   www.github.com      CNAME github.com
#   registry.npmjs.org  A 203.0.113.11
#   cdn.example.net     CNAME edge.example.net CNAME origin.example.net
#                       A 198.51.100.7, AAAA 2001:db8:2::11
#   example.net         A 203.0.113.11
#   denied.test         A 198.51.100.7     evil.test  A 203.0.113.11
#   short.test          A 203.0.113.11, TTL 1 (expiry)
#   ttl3.test           A 203.0.113.11, TTL 3 (expiry, with room for a
#                       loaded machine to connect before it)
#   *.tunnel.test       A 198.51.100.7 (any label: a tunnel would get answers)
#   many.test           100 A records 203.0.113.100-199: over 512 bytes and
#                       over EDNS's 1232, so a UDP answer is truncated (TC)
#   mid.test            40 A records 198.51.100.100-139 (no listener): over
#                       512 bytes, under EDNS's 1232
#   huge.test           129 A records 198.51.100.100-228 (no listener): one
#                       more than egret takes from one answer
#   r0..r999.race.test  AAAA 2001:db8:2::1:0 + N (distinct, no listener)
#   self.test           A 192.0.2.2, AAAA 2001:db8:1::2 (the client's own)
#   mcast.test          A 224.0.0.251, AAAA ff02::fb (multicast)
#   bcast.test          A 255.255.255.255, subnet.test A 192.0.2.255
#
# Hosts of egret's registry catalog and forge companions (user/policy/catalog.yaml),
# each on an address of its own so a sink line says which name was reached:
#   deb.debian.org       A 203.0.113.20     security.debian.org  A 203.0.113.21
#   archive.ubuntu.com   A 203.0.113.22     codeload.github.com  A 203.0.113.23
#   pypi.org             A 203.0.113.24
#   registry.evil.test   A 203.0.113.25 (a registry no policy names)
#
# Needs: root, iproute2, nsenter, dnsmasq (package dnsmasq-base), dig
# (bind9-dnsutils), $HELPERS (dir with the built sink and probe).
# world_up installs an EXIT trap calling world_down; a caller with its own
# cleanup should set its trap after world_up and call world_down from it.

# A sourcing suite may add names of its own before world_up, each
# "NAME=V4[,V6]": the addresses go on the world's lo, the names into its
# DNS (tests/clients starts its own servers on them; no sink listens there).
WORLD_EXTRA_HOSTS=${WORLD_EXTRA_HOSTS:-}

# Each address's own name, for a probe that speaks HTTP to port 80: egret
# pins plain HTTP on a learned address to the names that taught it
# (docs/SECURITY.md, "Host pinning"); the suites export this as the
# probe's PROBE_HTTP (tests/helpers/probe.c).
WORLD_HTTP_HOSTS="203.0.113.10=github.com,2001:db8:2::10=github.com"
WORLD_HTTP_HOSTS="$WORLD_HTTP_HOSTS,203.0.113.11=registry.npmjs.org"
WORLD_HTTP_HOSTS="$WORLD_HTTP_HOSTS,198.51.100.7=cdn.example.net,2001:db8:2::11=cdn.example.net"
WORLD_HTTP_HOSTS="$WORLD_HTTP_HOSTS,203.0.113.20=deb.debian.org,203.0.113.21=security.debian.org"
WORLD_HTTP_HOSTS="$WORLD_HTTP_HOSTS,203.0.113.22=archive.ubuntu.com,203.0.113.23=codeload.github.com"
WORLD_HTTP_HOSTS="$WORLD_HTTP_HOSTS,203.0.113.24=pypi.org,203.0.113.25=registry.evil.test"
WORLD_HTTP_HOSTS="$WORLD_HTTP_HOSTS,203.0.113.100=many.test,203.0.113.199=many.test"

WORLD_V4_ADDRS="203.0.113.10 203.0.113.11 198.51.100.7 203.0.113.100 203.0.113.199"
WORLD_V4_ADDRS="$WORLD_V4_ADDRS 203.0.113.20 203.0.113.21 203.0.113.22 203.0.113.23"
WORLD_V4_ADDRS="$WORLD_V4_ADDRS 203.0.113.24 203.0.113.25"
WORLD_V6_ADDRS="2001:db8:2::10 2001:db8:2::11"
WORLD_TCP_PORTS="22 80 443 8080"
WORLD_UDP_PORTS="5353 9999"
WORLD_LO_PORT=8081
WORLD_HOST_PORT=8082		# the client's service on 0.0.0.0 and [::]
WORLD_HOST_PORT2=8083		# another one, TCP on 0.0.0.0

WORLD_CLIENT="egw-$$-c"
WORLD_NS="egw-$$-w"
WORLD_DIR=""		# temp dir holding the logs
WORLD_LOG=""
WORLD_LO_LOG=""
WORLD_SINK_PIDS=""
WORLD_DNS4=198.51.100.53	# the world's resolver (also on TCP)
WORLD_DNS6=2001:db8:2::53
WORLD_DNS=$WORLD_DNS4		# what tests pass as egret's --dns-upstream
WORLD_DNS_LOG=""		# dnsmasq's query log
WORLD_DNS_PID=""
WORLD_RACE_NAMES=1000		# r0..r999.race.test

# The prefix that runs a command inside the client namespace while keeping
# this mount namespace (ip netns exec would remount /sys and hide cgroupfs
# and bpffs from egret). nsenter execs CMD in place, so after
#   "${WORLD_IN_CLIENT[@]}" CMD... &
# "$!" is CMD's own pid. (After "world_exec_client CMD &" it is not: bash
# forks a subshell to run the function.)
WORLD_IN_CLIENT=(nsenter --net="/run/netns/$WORLD_CLIENT" --)

world_exec_client() {
	"${WORLD_IN_CLIENT[@]}" "$@"
}

world_exec_world() {
	nsenter --net="/run/netns/$WORLD_NS" -- "$@"
}

# Start a sink in a namespace, logging to $2, and wait until it is bound.
_world_start_sink() {
	local ns=$1 log=$2 _
	shift 2
	: >"$log"
	nsenter --net="/run/netns/$ns" -- "$HELPERS/sink" "$log" "$@" \
		2>>"$WORLD_DIR/sink.err" &
	WORLD_SINK_PIDS="$WORLD_SINK_PIDS $!"
	for _ in $(seq 50); do
		grep -q '^ready ' "$log" && return 0
		kill -0 "$!" 2>/dev/null || break
		sleep 0.1
	done
	echo "world: sink in $ns did not start:" >&2
	cat "$WORLD_DIR/sink.err" >&2
	return 1
}

# Write dnsmasq's records (see the table at the top) into $WORLD_DIR.
_world_dns_config() {
	local i h
	{
		echo "host-record=github.com,203.0.113.10,2001:db8:2::10"
		echo "cname=www.github.com,github.com"
		echo "host-record=registry.npmjs.org,203.0.113.11"
		echo "cname=cdn.example.net,edge.example.net"
		echo "cname=edge.example.net,origin.example.net"
		echo "host-record=origin.example.net,198.51.100.7,2001:db8:2::11"
		echo "host-record=example.net,203.0.113.11"
		echo "host-record=denied.test,198.51.100.7"
		echo "host-record=evil.test,203.0.113.11"
		echo "host-record=short.test,203.0.113.11,1"
		echo "host-record=ttl3.test,203.0.113.11,3"
		echo "address=/tunnel.test/198.51.100.7"
		echo "host-record=deb.debian.org,203.0.113.20"
		echo "host-record=security.debian.org,203.0.113.21"
		echo "host-record=archive.ubuntu.com,203.0.113.22"
		echo "host-record=codeload.github.com,203.0.113.23"
		echo "host-record=pypi.org,203.0.113.24"
		echo "host-record=registry.evil.test,203.0.113.25"
		echo "host-record=self.test,192.0.2.2,2001:db8:1::2"
		echo "host-record=mcast.test,224.0.0.251,ff02::fb"
		echo "host-record=bcast.test,255.255.255.255"
		echo "host-record=subnet.test,192.0.2.255"
		for h in $WORLD_EXTRA_HOSTS; do
			echo "host-record=${h%%=*},${h#*=}"
		done
		for i in $(seq 100 199); do
			echo "host-record=many.test,203.0.113.$i"
		done
		for i in $(seq 100 228); do
			echo "host-record=huge.test,198.51.100.$i"
		done
		for i in $(seq 100 139); do
			echo "host-record=mid.test,198.51.100.$i"
		done
	} >"$WORLD_DIR/dnsmasq.conf"
	for ((i = 0; i < WORLD_RACE_NAMES; i++)); do
		printf '2001:db8:2::1:%x r%d.race.test\n' "$i" "$i"
	done >"$WORLD_DIR/race.hosts"
}

# Start dnsmasq in the world, bound to its two addresses only, and wait
# until it answers on both (from the client ns, no egret involved).
_world_start_dns() {
	local _
	_world_dns_config
	: >"$WORLD_DNS_LOG"
	# nsenter execs dnsmasq in place (not world_exec_world: a function
	# runs in a forked subshell), so $! is dnsmasq's pid. It stays in
	# the foreground; for each TCP connection it forks a child.
	nsenter --net="/run/netns/$WORLD_NS" -- \
		dnsmasq --keep-in-foreground --conf-file="$WORLD_DIR/dnsmasq.conf" \
		--addn-hosts="$WORLD_DIR/race.hosts" --no-resolv --no-hosts \
		--user=root --pid-file= --bind-interfaces \
		--listen-address="$WORLD_DNS4" --listen-address="$WORLD_DNS6" \
		--local-ttl=600 --log-queries --log-facility="$WORLD_DNS_LOG" \
		2>>"$WORLD_DIR/dnsmasq.err" &
	WORLD_DNS_PID=$!
	for _ in $(seq 50); do
		if [ "$(world_exec_client dig +short +time=1 +tries=1 \
			@"$WORLD_DNS4" github.com A 2>/dev/null)" = 203.0.113.10 ] &&
		   [ "$(world_exec_client dig +short +time=1 +tries=1 \
			@"$WORLD_DNS6" github.com AAAA 2>/dev/null)" = 2001:db8:2::10 ]; then
			return 0
		fi
		kill -0 "$WORLD_DNS_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "world: dnsmasq did not start:" >&2
	cat "$WORLD_DIR/dnsmasq.err" "$WORLD_DNS_LOG" >&2
	return 1
}

# The v4 or v6 addresses of WORLD_EXTRA_HOSTS, on one line.
_world_extra_addrs() {	# 4|6
	local h a addrs out=()
	for h in $WORLD_EXTRA_HOSTS; do
		IFS=, read -r -a addrs <<<"${h#*=}"
		for a in "${addrs[@]}"; do
			case $1:$a in 4:*.*.*.* | 6:*:*) out+=("$a") ;; esac
		done
	done
	echo "${out[*]}"
}

world_up() {
	local a p specs=""

	trap world_down EXIT
	WORLD_DIR=$(mktemp -d /tmp/egret-world.XXXXXX) || return 1
	chmod 755 "$WORLD_DIR"
	WORLD_LOG="$WORLD_DIR/world.log"
	WORLD_LO_LOG="$WORLD_DIR/client-lo.log"
	WORLD_DNS_LOG="$WORLD_DIR/dns.log"

	ip netns add "$WORLD_CLIENT" || return 1
	ip netns add "$WORLD_NS" || return 1
	# Interface names are <= 15 chars: "egw" + pid (<= 7 digits) + "c"/"w".
	ip link add "egw$$c" netns "$WORLD_CLIENT" type veth \
		peer name "egw$$w" netns "$WORLD_NS" || return 1

	# Client side: loopback up (the loopback tests need it), veth, and
	# routes to the world prefixes only.
	world_exec_client sh -e -c "
		ip link set lo up
		ip link set egw$$c up
		ip addr add 192.0.2.2/24 dev egw$$c
		ip -6 addr add 2001:db8:1::2/64 dev egw$$c nodad
		ip route add 203.0.113.0/24 via 192.0.2.1
		ip route add 198.51.100.0/24 via 192.0.2.1
		ip -6 route add 2001:db8:2::/64 via 2001:db8:1::1
	" || return 1

	# World side: service addresses as /32 and /128 on lo, so only they
	# answer (a /24 on lo would not make the rest reachable either, but
	# /32 says what we mean).
	world_exec_world sh -e -c "
		ip link set lo up
		ip link set egw$$w up
		ip addr add 192.0.2.1/24 dev egw$$w
		ip -6 addr add 2001:db8:1::1/64 dev egw$$w nodad
		for a in $WORLD_V4_ADDRS; do ip addr add \$a/32 dev lo; done
		for a in $WORLD_V6_ADDRS; do ip -6 addr add \$a/128 dev lo nodad; done
		for a in $(_world_extra_addrs 4); do ip addr add \$a/32 dev lo; done
		for a in $(_world_extra_addrs 6); do ip -6 addr add \$a/128 dev lo nodad; done
		ip addr add $WORLD_DNS4/32 dev lo
		ip -6 addr add $WORLD_DNS6/128 dev lo nodad
	" || return 1

	for a in $WORLD_V4_ADDRS; do
		for p in $WORLD_TCP_PORTS; do specs="$specs tcp:$a:$p"; done
		for p in $WORLD_UDP_PORTS; do specs="$specs udp:$a:$p"; done
	done
	for a in $WORLD_V6_ADDRS; do
		for p in $WORLD_TCP_PORTS; do specs="$specs tcp:[$a]:$p"; done
		for p in $WORLD_UDP_PORTS; do specs="$specs udp:[$a]:$p"; done
	done
	# shellcheck disable=SC2086 # word splitting of $specs is intended
	_world_start_sink "$WORLD_NS" "$WORLD_LOG" $specs || return 1
	_world_start_sink "$WORLD_CLIENT" "$WORLD_LO_LOG" \
		"tcp:127.0.0.1:$WORLD_LO_PORT" "udp:127.0.0.1:$WORLD_LO_PORT" \
		"tcp:[::1]:$WORLD_LO_PORT" "udp:[::1]:$WORLD_LO_PORT" \
		"tcp:0.0.0.0:$WORLD_HOST_PORT" "udp:0.0.0.0:$WORLD_HOST_PORT" \
		"tcp:[::]:$WORLD_HOST_PORT" "udp:[::]:$WORLD_HOST_PORT" \
		"tcp:0.0.0.0:$WORLD_HOST_PORT2" || return 1

	_world_start_dns || return 1

	# Prove the plumbing before any test relies on it: v4 and v6 reach
	# the world from the client ns (no egret involved).
	world_exec_client "$HELPERS/probe" tcp 203.0.113.10 80 world-check-v4 \
		>/dev/null || { echo "world: IPv4 path broken" >&2; return 1; }
	world_exec_client "$HELPERS/probe" tcp 2001:db8:2::10 80 world-check-v6 \
		>/dev/null || { echo "world: IPv6 path broken" >&2; return 1; }
}

# Kill every process still in our namespaces (sinks, and anything a test
# left there), then delete the namespaces. Safe to call twice.
world_down() {
	local ns pid
	# Braces: bash reports "Killed" for our background sinks on stderr;
	# that is expected here, not news.
	{
		for ns in "$WORLD_CLIENT" "$WORLD_NS"; do
			[ -e "/run/netns/$ns" ] || continue
			for pid in $(ip netns pids "$ns" 2>/dev/null); do
				kill -KILL "$pid"
			done
		done
		for pid in $WORLD_SINK_PIDS $WORLD_DNS_PID; do
			kill -KILL "$pid"
			wait "$pid"
		done
	} 2>/dev/null
	WORLD_SINK_PIDS=""
	WORLD_DNS_PID=""
	for ns in "$WORLD_CLIENT" "$WORLD_NS"; do
		[ -e "/run/netns/$ns" ] && ip netns del "$ns"
	done
	[ -n "$WORLD_DIR" ] && rm -rf "$WORLD_DIR"
	WORLD_DIR=""
	return 0
}

# The log line recording TOKEN (payload exactly TOKEN), or nothing.
# Usage: world_sink_line TOKEN [LOG]
world_sink_line() {
	awk -v want="data=$1" '$NF == want { print; exit }' "${2:-$WORLD_LOG}"
}

# Succeed if TOKEN is in the log. Usage: world_sink_has TOKEN [LOG]
world_sink_has() {
	[ -n "$(world_sink_line "$@")" ]
}

# Wait up to 15 s for TOKEN to show up (UDP has no acknowledgement; the
# bound costs nothing when it does, and gives a loaded machine room).
# Usage: world_sink_wait TOKEN [LOG]
world_sink_wait() {
	local _
	for _ in $(seq 150); do
		world_sink_has "$@" && return 0
		sleep 0.1
	done
	return 1
}

# A barrier before asserting that something did NOT arrive: send TOKEN to
# ADDR PORT from outside any egret cgroup and wait until the sink logged it.
# A socket's queue is FIFO and the sink serves it in order, so anything
# sent earlier to the same ADDR:PORT/proto is logged by then.
# Usage: world_barrier tcp|udp ADDR PORT TOKEN [LOG]
world_barrier() {
	local proto=$1 addr=$2 port=$3 token=$4
	world_exec_client "$HELPERS/probe" "$proto" "$addr" "$port" "$token" \
		>/dev/null || return 1
	world_sink_wait "$token" "${5:-$WORLD_LOG}"
}

# --- the world's DNS log -----------------------------------------------------
# dnsmasq logs one line per query it received:
#   Nov 30 06:11:10 dnsmasq[9706]: query[A] cdn.example.net from 192.0.2.2
# (a TCP query is logged by the child dnsmasq forks for the connection).

# How many queries for NAME (any type; names compare case-insensitively)
# reached the world. Usage: world_dns_count NAME
world_dns_count() {
	awk -v want="$1" '$5 ~ /^query\[/ && tolower($6) == tolower(want) { n++ }
		END { print n + 0 }' "$WORLD_DNS_LOG"
}

# How many queries for names ending in .SUFFIX (or SUFFIX itself) reached
# the world. Usage: world_dns_count_under SUFFIX
world_dns_count_under() {
	awk -v want="$1" '$5 ~ /^query\[/ {
		name = tolower($6); w = tolower(want)
		if (name == w || substr(name, length(name) - length(w)) == "." w) n++
	} END { print n + 0 }' "$WORLD_DNS_LOG"
}

# How many queries for NAME reached the world over TCP: those dnsmasq's
# per-connection children logged. Usage: world_dns_count_tcp NAME
world_dns_count_tcp() {
	awk -v want="$1" -v main="dnsmasq[$WORLD_DNS_PID]:" \
		'$5 ~ /^query\[/ && tolower($6) == tolower(want) && $4 != main { n++ }
		END { print n + 0 }' "$WORLD_DNS_LOG"
}

# A barrier before asserting that a query did NOT reach the world: ask for
# TOKEN.barrier.test from outside any egret cgroup and wait until dnsmasq
# logged it. Usage: world_dns_barrier TOKEN
world_dns_barrier() {
	local name="$1.barrier.test" _
	world_exec_client dig +time=2 +tries=1 @"$WORLD_DNS" "$name" >/dev/null 2>&1
	for _ in $(seq 150); do
		[ "$(world_dns_count "$name")" -gt 0 ] && return 0
		sleep 0.1
	done
	return 1
}
