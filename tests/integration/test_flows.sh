# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016,SC2034
# test_flows.sh - flows: which destinations an attempt reaches, over every socket path.
#
# Sourced by run.sh, which provides the world, attempt, expect_* and
# assert_* helpers. Shellcheck: `A && B || fail` is intended (fail exits);
# $1 in single quotes belongs to the sh -c COMMAND; ALLOW and SINK_LOG are
# read by run.sh's expect_* functions.

# 1. A non-allowlisted address: ECONNREFUSED, and nothing reaches the world.
t_deny_unlisted() {
	ALLOW=(--allow 203.0.113.10:80)
	expect_denied tcp 203.0.113.11 80
	expect_denied tcp 198.51.100.7 443
}

# 2. An allowed address:port works; the same address on another port (which
# has a listener, so only egret can refuse it) does not.
t_allow_port() {
	ALLOW=(--allow 203.0.113.10:80)
	expect_allowed tcp 203.0.113.10 80
	expect_denied tcp 203.0.113.10 8080
	expect_denied tcp 203.0.113.10 443
}

# 3. While an attempt runs, a process outside its cgroup still reaches the
# address the attempt may not.
t_outside_unaffected() {
	local script epid tin1 tin2 tout
	script=$(write_script cmd.sh <<'EOF'
d=$1 P=$2
"$P" tcp 203.0.113.11 80 "$3" >"$d/in1" 2>/dev/null
touch "$d/ready"
i=0; while [ ! -e "$d/go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
"$P" tcp 203.0.113.11 80 "$4" >"$d/in2" 2>/dev/null
exit 0
EOF
)
	tin1=$(token in1) tin2=$(token in2) tout=$(token out)
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --id "$ID_PREFIX-out" --user "$TEST_USER" \
		--allow 203.0.113.10:80 -- sh "$script" "$TDIR" "$P" "$tin1" "$tin2" \
		>"$TDIR/egret.out" 2>&1 &
	epid=$!
	wait_for_file "$TDIR/ready" 15
	assert_attempt_live "$ID_PREFIX-out"
	assert_eq "$REFUSED" "$(cat "$TDIR/in1")" "inside probe before"
	assert_eq ok "$(world_exec_client "$P" tcp 203.0.113.11 80 "$tout")" \
		"outside probe while the attempt runs"
	world_sink_has "$tout" || fail "outside probe's $tout not in the sink log"
	touch "$TDIR/go"
	reap "$epid" 20
	assert_eq 0 "$REAPED" "egret exit status ($(cat "$TDIR/egret.out"))"
	assert_eq "$REFUSED" "$(cat "$TDIR/in2")" "inside probe after the outside one"
	world_barrier tcp 203.0.113.11 80 "$(token barrier)" || fail "barrier"
	! world_sink_has "$tin1" && ! world_sink_has "$tin2" ||
		fail "an inside probe reached the sink"
}

# 4. UDP: unconnected sendto, connected send, and connected sendmsg with a
# cmsg (the kernel runs the sendmsg hook with no destination then).
t_udp() {
	ALLOW=(--allow 203.0.113.10:9999)
	expect_allowed udp 203.0.113.10 9999
	expect_denied udp 203.0.113.11 9999
	expect_denied udp 203.0.113.10 5353
	expect_allowed udp-connected 203.0.113.10 9999
	expect_denied udp-connected 203.0.113.11 9999
	expect_allowed udp-connected-cmsg 203.0.113.10 9999
	expect_denied udp-connected-cmsg 203.0.113.11 9999
}

# 4b. --deny-errno: a refused connect() or sendto() fails with the errno
# asked for, v4 and v6 alike (the default, ECONNREFUSED, is what every
# other test sees); a datagram dropped on its way out is the kernel's EPERM
# whatever is asked. An errno egret does not offer is refused at start.
t_deny_errno() {
	local e tok m a
	for e in EPERM ENETUNREACH EHOSTUNREACH ECONNREFUSED; do
		for m in "tcp 203.0.113.11 80" "udp 203.0.113.11 9999" "tcp 2001:db8:2::11 80" \
			"udp 2001:db8:2::11 9999" "udp-connected 203.0.113.11 9999"; do
			tok=$(token errno)
			# shellcheck disable=SC2086 # $m is MODE ADDR PORT
			attempt --user "$TEST_USER" --deny-errno "$e" --allow 203.0.113.10:80 \
				-- "$P" $m "$tok"
			a=$e
			[ "${m%% *}" = udp-connected ] && a=EPERM
			assert_eq "err $a" "$OUT" "--deny-errno $e, $m $(said)"
			# shellcheck disable=SC2086
			set -- $m
			world_barrier "${1%-connected}" "$2" "$3" "$(token barrier)" || fail "barrier"
			! world_sink_has "$tok" || fail "--deny-errno $e: $m reached the sink"
		done
	done
	attempt --user "$TEST_USER" --deny-errno ENOENT --allow 203.0.113.10:80 \
		-- touch "$TDIR/ran"
	assert_refused "--deny-errno ENOENT" "$TDIR/ran"
	assert_eq "egret: --deny-errno ENOENT: want ECONNREFUSED, EPERM, ENETUNREACH or EHOSTUNREACH" \
		"$ERR" "the one line $(said)"
}

# 5a. IPv6, TCP and UDP.
t_ipv6() {
	ALLOW=(--allow '[2001:db8:2::10]:80,9999')
	expect_allowed tcp 2001:db8:2::10 80
	expect_denied tcp 2001:db8:2::11 80
	expect_denied tcp 2001:db8:2::10 8080
	expect_allowed udp 2001:db8:2::10 9999
	expect_denied udp 2001:db8:2::11 9999
	expect_denied udp 2001:db8:2::10 5353
	expect_allowed udp-connected-cmsg 2001:db8:2::10 9999
	expect_denied udp-connected 2001:db8:2::11 9999
	# An IPv4 rule does not open IPv6 and vice versa.
	expect_denied tcp 203.0.113.10 80
}

# 5b. ::ffff:a.b.c.d on an AF_INET6 socket is judged as the IPv4 address.
t_v4mapped() {
	ALLOW=(--allow '203.0.113.10:80,9999')
	expect_allowed tcp ::ffff:203.0.113.10 80
	expect_denied tcp ::ffff:203.0.113.11 80
	expect_denied tcp ::ffff:203.0.113.10 443
	expect_allowed udp ::ffff:203.0.113.10 9999
	expect_denied udp ::ffff:203.0.113.11 9999
	expect_allowed udp-connected-cmsg ::ffff:203.0.113.10 9999
	expect_denied udp-connected ::ffff:203.0.113.11 9999
}

# CIDRs, port lists and ranges, any-port entries, IPv6 prefixes.
t_allow_specs() {
	ALLOW=(--allow 198.51.100.0/24:8080 --allow '203.0.113.10:79-81,443'
		--allow 203.0.113.11 --allow '[2001:db8:2::/64]:443')
	expect_allowed tcp 198.51.100.7 8080
	expect_denied tcp 198.51.100.7 80
	expect_allowed tcp 203.0.113.10 80
	expect_allowed tcp 203.0.113.10 443
	expect_denied tcp 203.0.113.10 8080
	expect_allowed tcp 203.0.113.11 8080
	expect_allowed udp 203.0.113.11 5353
	expect_allowed tcp 2001:db8:2::11 443
	expect_denied tcp 2001:db8:2::11 80
}

# --policy FILE: the YAML twin of --allow.
t_policy() {
	local policy
	policy=$(policy_path policy.yaml)
	cat >"$policy" <<'EOF'
cidrs: ["203.0.113.10:80", {cidr: "2001:db8:2::/64", ports: [443]}]
EOF
	ALLOW=(--policy "$policy")
	expect_allowed tcp 203.0.113.10 80
	expect_denied tcp 203.0.113.10 443
	expect_denied tcp 203.0.113.11 80
	expect_allowed tcp 2001:db8:2::11 443
	expect_denied tcp 2001:db8:2::11 80
}

# Loopback, unspecified and link-local need naming; a broad CIDR is not naming.
t_loopback() {
	SINK_LOG=$WORLD_LO_LOG
	ALLOW=(--allow 203.0.113.10:80)
	expect_denied tcp 127.0.0.1 "$WORLD_LO_PORT"
	expect_denied udp 127.0.0.1 "$WORLD_LO_PORT"
	expect_denied tcp ::1 "$WORLD_LO_PORT"
	expect_denied udp ::1 "$WORLD_LO_PORT"
	expect_denied tcp ::ffff:127.0.0.1 "$WORLD_LO_PORT"
	expect_denied tcp 0.0.0.0 "$WORLD_LO_PORT"	# the kernel means 127.0.0.1
	expect_denied udp 0.0.0.0 "$WORLD_LO_PORT"
	expect_denied udp :: "$WORLD_LO_PORT"

	ALLOW=(--allow "127.0.0.1:$WORLD_LO_PORT")
	expect_allowed tcp 127.0.0.1 "$WORLD_LO_PORT"
	expect_allowed udp 127.0.0.1 "$WORLD_LO_PORT"
	expect_denied tcp 0.0.0.0 "$WORLD_LO_PORT"
	expect_denied tcp ::1 "$WORLD_LO_PORT"

	ALLOW=(--allow 0.0.0.0/0 --allow ::/0)
	expect_denied tcp 127.0.0.1 "$WORLD_LO_PORT"
	expect_denied tcp ::1 "$WORLD_LO_PORT"
	SINK_LOG=$WORLD_LOG
	expect_allowed tcp 203.0.113.11 8080
	# Link-local and metadata addresses have no route (or, fe80:: without a
	# scope, are invalid) here: the kernel alone would say ENETUNREACH or
	# EINVAL, so ECONNREFUSED is egret's verdict.
	local a
	for a in 169.254.169.254 169.254.1.1 fe80::1 fd00:ec2::254; do
		attempt --user "$TEST_USER" "${ALLOW[@]}" -- "$P" tcp "$a" 80 x
		assert_eq "$REFUSED" "$OUT" "tcp $a under 0.0.0.0/0 and ::/0 $(said)"
	done
}

# Other syscall paths to a destination: TCP Fast Open (sendto connects),
# a sockaddr_in with family AF_UNSPEC (udp_sendmsg takes it as IPv4), and a
# sockaddr_in sent on an AF_INET6 UDP socket (handed to the IPv4 path).
t_syscall_variants() {
	ALLOW=(--allow '203.0.113.10:80,9999')
	expect_allowed tcp-fastopen 203.0.113.10 80
	expect_denied tcp-fastopen 203.0.113.11 80
	expect_denied tcp-fastopen ::ffff:203.0.113.11 80
	expect_denied udp-unspec 203.0.113.11 9999
	expect_allowed udp6-v4addr 203.0.113.10 9999
	expect_denied udp6-v4addr 203.0.113.11 9999

	# Connected to an allowed peer, sendto() a denied one: each send is
	# judged on its own address, not on what connect() was allowed.
	ALLOW=(--allow 203.0.113.10:9999 --allow '[2001:db8:2::10]:9999')
	expect_sendto_denied 203.0.113.10 203.0.113.11
	expect_sendto_denied 2001:db8:2::10 2001:db8:2::11
	# The same with the explicit address's family set to AF_UNSPEC: the
	# hook sees AF_UNSPEC (as for a send with no address at all), but
	# udp_sendmsg() delivers to the address given, not to the peer.
	expect_sendto_denied 203.0.113.10 203.0.113.11 udp-connected-unspec
}

expect_sendto_denied() {	# CONNECTED_TO DENIED [MODE] (UDP port 9999)
	local tok
	tok=$(token via)
	attempt --user "$TEST_USER" "${ALLOW[@]}" -- \
		"$P" "${3:-udp-connected-sendto}" "$1" 9999 "$2" 9999 "$tok"
	assert_eq "$REFUSED" "$OUT" "connected to $1, ${3:-sendto} $2 $(said)"
	world_barrier udp "$2" 9999 "$(token barrier)" || fail "barrier"
	! world_sink_has "$tok" || fail "sendto $2 on a socket connected to $1 got through"
}
