#!/usr/bin/env bash
# run.sh - egret's red-team suite: one test per bypass vector of
# docs/SECURITY.md, each inside a real attempt in the sealed test world.
#
#   EGRET=/abs/build/egret HELPERS=/abs/build/helpers tests/redteam/run.sh [REGEX]
#
# Runs every test function (or those whose name matches REGEX) and ends with
# exactly one line "N passed, N failed". Exit status 1 if anything failed.
# Needs root, cgroup v2, BPF, network namespaces, dnsmasq, dig, curl, git;
# without them it skips (exit 0), except with CI=true, where that is a
# failure. VERBOSE=1 shows the output of passing tests too.
#
# Evidence rule (stricter than the integration suite's): a vector counts as
# closed only if
#   1. COMMAND, running as the test user (env.sh) inside the attempt, saw the specific
#      refusal (errno AND the system call that returned it, e.g.
#      "err EPERM socket"), and
#   2. the test's unique token is in none of the world's records, checked
#      after barriers proved they had caught up: the world's sinks
#      ($WORLD_LOG, $WORLD_LO_LOG), its resolver's query log
#      ($WORLD_DNS_LOG), the unix-socket sink, and a packet capture on the
#      world's side of the veth ($CAPTURE_LOG: every packet that reached
#      the world, whatever its protocol, options or destination), and
#   3. an allowed flow in the same attempt DID arrive (so a test cannot pass
#      because everything was broken), and, where the kernel alone would
#      not refuse, the same attack outside egret (as the same user) DID work: the
#      refusal is egret's.
#
# A failing test says which vector got through and what the world received.
#
# Every egret invocation passes --policy none and --user $TEST_USER.
# Traffic stays inside the two namespaces world.sh builds (documentation
# ranges only); tests/world and tests/integration are sourced, read-only.
# SC2015: `A && B || fail` is intended (fail exits). SC2016: single-quoted
# $1 belongs to a child shell. SC2034: variables read by sourced files.
# shellcheck disable=SC2015,SC2016,SC2034
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$HERE/../integration/lib.sh"
# shellcheck source=tests/world/world.sh
. "$HERE/../world/world.sh"
# shellcheck source=tests/integration/env.sh
. "$HERE/../integration/env.sh"
# shellcheck source=tests/integration/tmux.sh
. "$HERE/../integration/tmux.sh"

EGRET=${EGRET:-}
HELPERS=${HELPERS:-}
P="$HELPERS/probe"
R="$HELPERS/redteam"
ID_PREFIX="egrt$$"		# every --id we pass starts with this
PIN_ROOT=/sys/fs/bpf/egret
STATE_ROOT=/run/egret
CG2=""
SUITE_CG=""		# the suite's own cgroup (env.sh: suite_cgroup_enter)
EGRET_CG_PARENT=""
CLIENT_IF="egw$$c"		# world.sh's veth names
WORLD_IF="egw$$w"
CAPTURE_LOG=""
CAPTURE_PID=""
ECHO_PIDS=""
ECHO_PORT=7007			# TCP+UDP echo on 203.0.113.10 and [2001:db8:2::10]
UNIX_LOG=""			# the unix-socket sink's log (t_pending_unix_*)

# --- tokens, steps, attempts ------------------------------------------------

# A token unique to this call. The trailing "q" keeps one token from being a
# prefix of another; lower case so that it can be a DNS label as well.
tk() {
	echo "$1-$BASHPID-${RANDOM}${RANDOM}q"
}

# A test's COMMAND is usually a list of steps: one "KEY COMMAND..." per line,
# written now (so tokens and paths are expanded now; escape what must be
# expanded by COMMAND's shell at run time), run by steps.sh, which prints
# "KEY: <first line of the step's stdout>". Usage: steps NAME <<EOF ... EOF
steps() {
	cat >"$TDIR/steps.$1"
	chmod 644 "$TDIR/steps.$1"
	[ -e "$TDIR/steps.sh" ] && return 0
	cat >"$TDIR/steps.sh" <<'EOF'
# steps.sh FILE ERRFILE - run each "KEY COMMAND..." line of FILE.
while read -r key cmd; do
	case $key in '' | '#'*) continue ;; esac
	echo "== $key: $cmd" >>"$2"
	out=$(eval "$cmd" 2>>"$2" </dev/null)
	echo "$key: $(printf '%s\n' "$out" | head -n 1)"
done <"$1"
EOF
	chmod 644 "$TDIR/steps.sh"
}

# A COMMAND script in a file. Usage: path=$(write_script NAME <<'EOF' ... EOF)
write_script() {
	cat >"$TDIR/$1"
	chmod 755 "$TDIR/$1"
	echo "$TDIR/$1"
}

# run_in NAME EGRET_ARGS...: steps NAME inside a fresh attempt; sets RC, OUT
# (COMMAND's stdout), ERR (stderr), and STEPS_ERR (the steps' stderr file).
run_in() {
	local name=$1
	shift
	STEPS_ERR="$TDIR/$name.in.err"
	attempt "$@" -- sh "$TDIR/steps.sh" "$TDIR/steps.$name" "$STEPS_ERR"
	[ "$VERBOSE" = 1 ] && note "inside ($*): rc=$RC" && printf '%s\n' "$OUT" | sed 's/^/    /'
	return 0
}

# run_out NAME: the same steps as the test user in the client ns, outside any
# attempt: what the kernel alone allows. Sets OUTSIDE.
run_out() {
	OUTSIDE=$(timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		sh "$TDIR/steps.sh" "$TDIR/steps.$1" "$TDIR/$1.out.err" 2>&1)
	[ "$VERBOSE" = 1 ] && note "outside egret, as $TEST_USER:" && printf '%s\n' "$OUTSIDE" | sed 's/^/    /'
	return 0
}

# attempt EGRET_ARGS...: `egret run --policy none --user $TEST_USER ARGS` in the
# client ns, bounded; sets RC, OUT, ERR.
attempt() {
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none \
		--user "$TEST_USER" "$@" >"$TDIR/out" 2>"$TDIR/err"
	RC=$?
	OUT=$(cat "$TDIR/out")
	ERR=$(cat "$TDIR/err")
}

# attempt_bg EGRET_ARGS...: the same in the background; EPID is its pid.
# attempt_reap [SECONDS] waits for it and sets RC, OUT, ERR.
attempt_bg() {
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --user "$TEST_USER" "$@" \
		>"$TDIR/out" 2>"$TDIR/err" &
	EPID=$!
}

attempt_reap() {
	reap "$EPID" "${1:-30}"
	RC=$REAPED
	OUT=$(cat "$TDIR/out")
	ERR=$(cat "$TDIR/err")
}

said() {
	echo "[rc=$RC stdout='$OUT' stderr='$ERR'${STEPS_ERR:+ steps stderr='$(cat "$STEPS_ERR" 2>/dev/null)'}]"
}

res() {		# KEY: the result of step KEY inside
	printf '%s\n' "$OUT" | sed -n "s/^$1: //p" | head -n 1
}

ores() {	# KEY: the result of step KEY outside
	printf '%s\n' "$OUTSIDE" | sed -n "s/^$1: //p" | head -n 1
}

expect() {	# KEY WANT: step KEY inside the attempt gave exactly WANT
	[ "$(res "$1")" = "$2" ] ||
		fail "inside the attempt, $1: want '$2', got '$(res "$1")' $(said)"
}

expect_re() {	# KEY ERE
	[[ $(res "$1") =~ $2 ]] ||
		fail "inside the attempt, $1: want /$2/, got '$(res "$1")' $(said)"
}

oexpect() {	# KEY WANT: the same step outside egret gave WANT
	[ "$(ores "$1")" = "$2" ] ||
		fail "outside egret (as $TEST_USER), $1: want '$2', got '$(ores "$1")' [$OUTSIDE]"
}

# --- evidence ----------------------------------------------------------------

# wait_log TOKEN LOG [SECONDS]: TOKEN shows up in LOG (default: within
# 15 s, which costs nothing when it does).
wait_log() {
	local i
	for ((i = 0; i < ${3:-15} * 10; i++)); do
		grep -qiF -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

all_logs() {
	local l
	for l in "$WORLD_LOG" "$WORLD_LO_LOG" "$WORLD_DNS_LOG" "$CAPTURE_LOG" "$UNIX_LOG"; do
		[ -n "$l" ] && [ -e "$l" ] && echo "$l"
	done
}

# Barriers: a datagram from outside any attempt to the world's sink (seen by
# the sink and by the capture) and to the loopback sink. Queues are FIFO, so
# what the attempt sent earlier has been logged once these are.
barriers() {
	local b
	b=$(tk barrier)
	world_exec_client "$P" udp 203.0.113.10 9999 "$b" >/dev/null 2>&1
	wait_log "$b" "$WORLD_LOG" && wait_log "$b" "$CAPTURE_LOG" ||
		fail "barrier $b did not reach the world sink and the capture"
	b=$(tk barrier)
	world_exec_client "$P" udp 127.0.0.1 "$WORLD_LO_PORT" "$b" >/dev/null 2>&1
	wait_log "$b" "$WORLD_LO_LOG" || fail "barrier $b did not reach the loopback sink"
}

# nowhere TOKEN...: after the barriers, no record of the world holds TOKEN.
nowhere() {
	local t l line
	barriers
	for t in "$@"; do
		for l in $(all_logs); do
			line=$(grep -iF -- "$t" "$l" | head -n 1)
			[ -z "$line" ] || fail "$t reached the world ($l): ${line:0:300}"
		done
	done
}

# arrived TOKEN [LOG]: TOKEN reached the world (default: the sink).
arrived() {
	wait_log "$1" "${2:-$WORLD_LOG}" || fail "$1 never reached ${2:-$WORLD_LOG}"
}

# arrived_at TOKEN DEST: the sink got TOKEN on DEST (e.g. 203.0.113.10:80).
arrived_at() {
	local line
	arrived "$1"
	line=$(grep -F -- "data=$1" "$WORLD_LOG" | head -n 1)
	assert_eq "$2" "$(echo "$line" | awk '{ print $2 }')" "where $1 arrived ($line)"
}

# captured TOKEN: the capture's line for TOKEN (waits for it).
captured() {
	wait_log "$1" "$CAPTURE_LOG" || return 1
	grep -F -- "$1" "$CAPTURE_LOG" | head -n 1
}

# The allowed control every test runs alongside its attack, in the same
# attempt (with --allow 203.0.113.10:80 or wider): step "control".
CONTROL_ALLOW=(--allow 203.0.113.10:80)
check_control() {	# TOKEN
	expect control ok
	arrived_at "$1" 203.0.113.10:80
}

# === the tests ===============================================================

# shellcheck source=tests/redteam/vectors.sh
. "$HERE/vectors.sh"
# shellcheck source=tests/redteam/pinning.sh
. "$HERE/pinning.sh"
# shellcheck source=tests/redteam/budgets.sh
. "$HERE/budgets.sh"
# shellcheck source=tests/redteam/asks.sh
. "$HERE/asks.sh"

TESTS=(
	t_rt_tcp t_rt_tcp_fastopen t_rt_udp t_rt_udp_connected_cmsg
	t_rt_v4mapped t_rt_nat64 t_rt_special_addresses t_rt_loopback_reply_port
	t_rt_broadcast
	t_rt_forged_source t_rt_multicast_join t_rt_host_addresses
	t_rt_listener_presence
	t_rt_raw_socket t_rt_ping_socket t_rt_udplite t_rt_sctp
	t_rt_packet_socket t_rt_families
	t_rt_ipv4_source_route t_rt_ipv6_routing_header
	t_rt_io_uring t_rt_user_namespaces t_rt_setns t_rt_privileges t_rt_setid
	t_rt_dns_foreign_resolver t_rt_dns_tunnel t_rt_dns_smuggling
	t_rt_inbound_listener t_rt_cgroup_escape t_rt_detach_programs
	t_rt_inherited_fds t_rt_keep_fd_sockets t_rt_expired_entries
	t_rt_ptrace_pidfd t_rt_mptcp t_rt_abstract_unix t_rt_daemon_sockets
	t_rt_daemon_sockets_gaps
	t_rt_terminal_injection
	t_rt_sni_pinning t_rt_sni_pinning_v6 t_rt_sni_pinning_exempt
	t_rt_sni_pinning_teardown t_rt_sni_pinning_static_pinned t_rt_http_pinning
	t_rt_http_pinning_bodies t_rt_http_pinning_exempt
	t_rt_legit_traffic
	t_rt_upload_budget
	t_rt_feed_pinning
	t_rt_request_peer t_rt_request_flood t_rt_request_escapes
)

# === main ====================================================================

start_world_extras() {
	local _
	CAPTURE_LOG="$WORLD_DIR/capture.log"
	: >"$CAPTURE_LOG"
	nsenter --net="/run/netns/$WORLD_NS" -- "$R" capture "$CAPTURE_LOG" "$WORLD_IF" \
		>/dev/null 2>>"$WORLD_DIR/capture.err" &
	CAPTURE_PID=$!
	nsenter --net="/run/netns/$WORLD_NS" -- "$R" echo "$WORLD_DIR/echo4.ready" \
		203.0.113.10 "$ECHO_PORT" >/dev/null 2>>"$WORLD_DIR/echo.err" &
	ECHO_PIDS=$!
	nsenter --net="/run/netns/$WORLD_NS" -- "$R" echo "$WORLD_DIR/echo6.ready" \
		2001:db8:2::10 "$ECHO_PORT" >/dev/null 2>>"$WORLD_DIR/echo.err" &
	ECHO_PIDS="$ECHO_PIDS $!"
	for _ in $(seq 50); do
		grep -q '^ready ' "$CAPTURE_LOG" && [ -e "$WORLD_DIR/echo4.ready" ] &&
			[ -e "$WORLD_DIR/echo6.ready" ] && break
		sleep 0.1
	done
	grep -q '^ready ' "$CAPTURE_LOG" || { cat "$WORLD_DIR/capture.err" >&2; return 1; }
	[ -e "$WORLD_DIR/echo4.ready" ] && [ -e "$WORLD_DIR/echo6.ready" ] ||
		{ cat "$WORLD_DIR/echo.err" >&2; return 1; }
	# The capture sees what the client sends: prove it before relying on it.
	world_exec_client "$P" udp 203.0.113.10 9999 capture-check >/dev/null 2>&1
	wait_log capture-check "$CAPTURE_LOG" || { echo "capture sees nothing" >&2; return 1; }
}

stop_world_extras() {
	local pid
	{
		for pid in $CAPTURE_PID $ECHO_PIDS; do
			kill -KILL "$pid"
			wait "$pid"
		done
	} 2>/dev/null
	CAPTURE_PID="" ECHO_PIDS=""
}

final_summary() {
	[ "$TESTS_SKIPPED" -gt 0 ] && echo "($TESTS_SKIPPED skipped)"
	echo "$TESTS_PASSED passed, $TESTS_FAILED failed"
	[ "$TESTS_FAILED" -eq 0 ]
}

main() {
	local filter=${1:-} t problem

	if [ ! -x "$EGRET" ] || [ ! -x "$HELPERS/probe" ] || [ ! -x "$HELPERS/sink" ] ||
	   [ ! -x "$HELPERS/redteam" ]; then
		echo "run.sh: need EGRET (egret binary) and HELPERS (dir with probe, sink," \
			"redteam); got EGRET='$EGRET' HELPERS='$HELPERS'" >&2
		TESTS_FAILED=1
		final_summary
		exit 1
	fi
	case $EGRET in /*) ;; *) EGRET="$PWD/$EGRET" ;; esac
	case $HELPERS in /*) ;; *) HELPERS="$PWD/$HELPERS" ;; esac
	P="$HELPERS/probe" R="$HELPERS/redteam"
	# Probes to port 80 speak HTTP naming their address's host (world.sh).
	export PROBE_HTTP="$WORLD_HTTP_HOSTS"

	CG2=$(cgroup2_mount)
	problem=$(preflight_problem setpriv git tmux)
	if [ -n "$problem" ]; then
		if [ "${CI:-}" = true ]; then
			echo "FAIL  preflight: $problem (CI=true: the red-team suite must run)"
			TESTS_FAILED=1
			final_summary
			exit 1
		fi
		echo "SKIP: red-team tests need root, cgroup2, BPF and netns: $problem"
		echo "0 passed, 0 failed"
		exit 0
	fi
	if ! suite_cgroup_enter; then
		echo "FAIL  suite_cgroup_enter: could not make the suite's cgroup under $CG2"
		TESTS_FAILED=1
		final_summary
		exit 1
	fi

	if ! world_up || ! start_world_extras; then
		echo "FAIL  world_up: could not build the test network"
		stop_world_extras
		suite_cgroup_leave
		TESTS_FAILED=1
		final_summary
		exit 1
	fi
	trap 'stop_world_extras; test_tidy >/dev/null 2>&1; world_down; suite_gc >/dev/null 2>&1; suite_cgroup_leave' EXIT
	trap 'exit 130' INT TERM

	for t in "${TESTS[@]}"; do
		[ -n "$filter" ] && ! [[ $t =~ $filter ]] && continue
		run_test "$t"
	done
	final_summary
}

main "$@"
