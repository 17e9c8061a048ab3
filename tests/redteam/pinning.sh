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
# first SYN: write() starts while the socket is still connecting, and
# goes on the old way once the retried SYN is answered (about 1 s). The
# writer then gives up at once, the attempt ends, and the world is
# watched for longer than the retransmissions that would carry the hello.
t_rt_sni_pinning_teardown() {
	local d1 rule=(INPUT -p tcp --syn -d 203.0.113.11 --dport 443 -j DROP)
	d1=$(tk d)
	steps in <<EOF
resolve getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print \$1 }'
early $H --early --no-wait --wait-ms 3000 --data $d1 203.0.113.11 443 $d1.cdn.test
EOF
	world_exec_world iptables -I "${rule[@]}" || fail "iptables in the world"
	(sleep 0.5 && world_exec_world iptables -D "${rule[@]}") &
	run_in in "${PIN_ALLOW[@]}" --dns-upstream "$WORLD_DNS"
	wait
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
