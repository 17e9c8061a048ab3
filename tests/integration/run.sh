#!/usr/bin/env bash
# run.sh - egret's privileged integration suite.
#
#   EGRET=/abs/build/egret HELPERS=/abs/build/helpers tests/integration/run.sh [REGEX]
#
# Builds a sealed network (tests/world/world.sh), runs every test function
# (or those whose name matches REGEX) and ends with one line:
# "N passed, N failed[, N skipped]". Exit status 1 if anything failed.
#
# Needs root, cgroup v2, BPF, network namespaces, dnsmasq, dig and curl.
# Without them it skips (exit 0) - except with CI=true, where a skip is a
# failure. VERBOSE=1 shows the output of passing tests too.
#
# Evidence rule: a flow counts as denied only if the probe inside the attempt
# saw the specific errno ($REFUSED: ECONNREFUSED, egret's default) AND the world's sink never logged the probe's
# unique payload token, checked after a barrier (world_barrier) proves the
# sink had caught up. An allowed flow must show up in the sink log at the
# expected address.
# SC2015: `A && B || fail` is intended: fail exits. SC2016: $1 in single
# quotes is for the sh -c COMMAND, not for us.
# SC2013: cgroup.procs holds one pid per line; word splitting is fine.
# shellcheck disable=SC2015,SC2016,SC2013
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$HERE/lib.sh"
# shellcheck source=tests/world/world.sh
. "$HERE/../world/world.sh"
# shellcheck source=tests/integration/env.sh
. "$HERE/env.sh"

EGRET=${EGRET:-}
HELPERS=${HELPERS:-}
P="$HELPERS/probe"
# A probe to port 80 speaks HTTP naming the host its address belongs to in
# the test world (WORLD_HTTP_HOSTS): egret pins plain HTTP on learned
# addresses to the names that taught them. A test that learned an address
# under another name sets PROBE_HTTP=NAME. COMMAND inherits it.
export PROBE_HTTP="$WORLD_HTTP_HOSTS"
ID_PREFIX="egt$$"		# every --id we pass starts with this
PIN_ROOT=/sys/fs/bpf/egret
STATE_ROOT=/run/egret
CG2=""			# cgroup2 mount point, found like egret finds it
EGRET_CG_PARENT=""	# egret's default --cgroup-parent, as a path
SUITE_CG=""		# the suite's own cgroup (env.sh: suite_cgroup_enter)

# --- egret ---------------------------------------------------------------

# attempt ARGS...: `egret run ARGS` in the client ns (bounded); sets RC, OUT
# (COMMAND's stdout) and ERR (egret's and COMMAND's stderr).
# `--policy none` first: an operator's /etc/egret/policy.yaml (or the
# built-in default) must not change what a test allows; a test's own
# --policy comes later and wins.
attempt() {
	attempt_bare --policy none "$@"
}

# attempt_bare ARGS...: the same without `--policy none`, so that egret
# reads /etc/egret/policy.yaml or, when that does not exist, applies its
# built-in default policy (test_policy.sh checks which with `egret check`).
attempt_bare() {
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "$EGRET" run "$@" >"$TDIR/out" 2>"$TDIR/err"
	RC=$?
	OUT=$(cat "$TDIR/out")
	ERR=$(cat "$TDIR/err")
}

# What egret said, for failure messages.
said() {
	echo "[rc=$RC stdout='$OUT' stderr='$ERR']"
}

cg_of() {
	echo "$EGRET_CG_PARENT/$1"
}

# cg_runs ID COMM: a process named COMM runs in the attempt's cgroup (so
# egret has exec'd COMMAND).
cg_runs() {
	local pid
	for pid in $(cat "$(cg_of "$1")/cgroup.procs" 2>/dev/null); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && return 0
	done
	return 1
}

# The pid we are about to signal really is egret (not a wrapper).
assert_is_egret() {	# PID
	assert_eq egret "$(cat "/proc/$1/comm" 2>/dev/null)" "command name of pid $1"
}

assert_no_residue() {	# ID
	assert_absent "$(cg_of "$1")" "cgroup of $1 after exit"
	assert_absent "$PIN_ROOT/$1" "pins of $1 after exit"
	assert_absent "$STATE_ROOT/$1" "state file of $1 after exit"
}

assert_attempt_live() {	# ID
	assert_exists "$(cg_of "$1")" "cgroup of live attempt $1"
	assert_exists "$PIN_ROOT/$1" "pins of live attempt $1"
	assert_exists "$STATE_ROOT/$1" "state file of live attempt $1"
}

# Exit 125 (or CODE: 2 for a refused policy), exactly one stderr line, and
# COMMAND never ran (no marker).
assert_refused() {	# WHAT MARKER [CODE]
	[ "$RC" = "${3:-125}" ] || fail "$1: want exit ${3:-125} $(said)"
	[ -s "$TDIR/err" ] && [ "$(wc -l <"$TDIR/err")" = 1 ] ||
		fail "$1: want exactly one stderr line $(said)"
	assert_absent "$2" "$1: COMMAND ran anyway, marker"
}

# --- one probe inside a fresh attempt ---------------------------------------

ALLOW=()		# egret arguments for the next expect_* calls
SINK_LOG=""		# which sink log to read; world_up sets the default

# Where a probe to ADDR lands in a sink: ::ffff:a.b.c.d is IPv4, and the
# kernel sends 0.0.0.0 / :: to the local host.
landing() {
	case $1 in
	::ffff:*) echo "${1#::ffff:}" ;;
	0.0.0.0) echo 127.0.0.1 ;;
	::) echo ::1 ;;
	*) echo "$1" ;;
	esac
}

dest_of() {	# ADDR PORT -> the sink's name for it
	local a
	a=$(landing "$1")
	case $a in *:*) echo "[$a]:$2" ;; *) echo "$a:$2" ;; esac
}

expect_allowed() {	# MODE ADDR PORT
	local mode=$1 addr=$2 port=$3 tok line
	tok=$(token allow)
	attempt --user "$TEST_USER" "${ALLOW[@]}" -- "$P" "$mode" "$addr" "$port" "$tok"
	[ "$RC" = 0 ] && [ "$OUT" = ok ] ||
		fail "$mode $addr $port with ${ALLOW[*]}: want ok $(said)"
	# tcp "ok" means the sink already logged it; a datagram may lag.
	world_sink_wait "$tok" "$SINK_LOG" ||
		fail "$mode $addr $port: probe said ok but the sink never got $tok"
	line=$(world_sink_line "$tok" "$SINK_LOG")
	assert_eq "$(dest_of "$addr" "$port")" "$(echo "$line" | awk '{ print $2 }')" \
		"$mode $addr $port: where $tok arrived"
}

expect_denied() {	# MODE ADDR PORT
	local mode=$1 addr=$2 port=$3 tok btok proto=udp
	case $mode in tcp*) proto=tcp ;; esac
	# A connected UDP socket's connect() is not judged (it sends nothing):
	# its datagram is dropped on the way out, which the kernel reports as
	# EPERM. Everything else is refused in the call - a v4-mapped peer's
	# datagram too: udpv6_sendmsg() hands it to udp_sendmsg() with the
	# address, and the sendmsg4 hook judges it.
	local want=$REFUSED
	case $mode:$addr in udp-connected:::ffff:*) ;; udp-connected:*) want=$DROPPED ;; esac
	tok=$(token deny)
	attempt --user "$TEST_USER" "${ALLOW[@]}" -- "$P" "$mode" "$addr" "$port" "$tok"
	[ "$RC" = 1 ] && [ "$OUT" = "$want" ] ||
		fail "$mode $addr $port with ${ALLOW[*]}: want '$want' $(said)"
	btok=$(token barrier)
	world_barrier "$proto" "$(landing "$addr")" "$port" "$btok" "$SINK_LOG" ||
		fail "barrier to $(landing "$addr") $port ($proto) did not arrive"
	! world_sink_has "$tok" "$SINK_LOG" ||
		fail "$mode $addr $port: denied, yet the sink got $tok: $(world_sink_line "$tok" "$SINK_LOG")"
}

# COMMAND scripts live in files (not sh -c strings) so their quoting stays
# readable. Usage: path=$(write_script NAME <<'EOF' ... EOF)
write_script() {
	cat >"$TDIR/$1"
	chmod 755 "$TDIR/$1"
	echo "$TDIR/$1"
}

# A policy file's path: in $TDIR/etc, root-owned 0755, because egret
# refuses a policy whose file or directory others can write ($TDIR itself
# is world-writable for the unprivileged COMMAND).
# Usage: path=$(policy_path NAME); cat >"$path" <<'EOF' ... EOF
policy_path() {
	[ -d "$TDIR/etc" ] || mkdir -m 0755 "$TDIR/etc"
	echo "$TDIR/etc/$1"
}

# === the tests ===============================================================

# shellcheck source=tests/integration/test_flows.sh
. "$HERE/test_flows.sh"
# shellcheck source=tests/integration/test_lifecycle.sh
. "$HERE/test_lifecycle.sh"
# shellcheck source=tests/integration/test_crash.sh
. "$HERE/test_crash.sh"
# shellcheck source=tests/integration/test_dns.sh
. "$HERE/test_dns.sh"
# shellcheck source=tests/integration/test_policy.sh
. "$HERE/test_policy.sh"
# shellcheck source=tests/integration/test_events.sh
. "$HERE/test_events.sh"
# shellcheck source=tests/integration/test_requests.sh
. "$HERE/test_requests.sh"
# shellcheck source=tests/integration/test_shared.sh
. "$HERE/test_shared.sh"
# shellcheck source=tests/integration/tmux.sh
. "$HERE/tmux.sh"
# shellcheck source=tests/integration/test_terminal.sh
. "$HERE/test_terminal.sh"
# shellcheck source=tests/integration/test_egretd.sh
. "$HERE/test_egretd.sh"
# shellcheck source=tests/integration/test_egretd_terminal.sh
. "$HERE/test_egretd_terminal.sh"
# shellcheck source=tests/integration/test_egretd_metrics.sh
. "$HERE/test_egretd_metrics.sh"
# shellcheck source=tests/integration/test_worktree.sh
. "$HERE/test_worktree.sh"
# shellcheck source=tests/integration/test_agents_ready.sh
. "$HERE/test_agents_ready.sh"
# shellcheck source=tests/integration/test_faults.sh
. "$HERE/test_faults.sh"
# shellcheck source=tests/integration/test_budgets.sh
. "$HERE/test_budgets.sh"
# shellcheck source=tests/integration/test_limits.sh
. "$HERE/test_limits.sh"
# shellcheck source=tests/integration/test_request.sh
. "$HERE/test_request.sh"
# shellcheck source=tests/integration/test_receipt.sh
. "$HERE/test_receipt.sh"

TESTS=(
	# test_flows.sh
	t_deny_unlisted t_allow_port t_outside_unaffected t_udp t_deny_errno t_ipv6
	t_v4mapped t_allow_specs t_policy t_loopback t_syscall_variants
	# test_lifecycle.sh
	t_cli t_exit_status t_signals t_shared_uid t_shared_uid_thread t_domain_files t_environment t_user
	t_fail_closed
	t_cgroup_parent
	t_escape t_leftover_killed
	# test_crash.sh
	t_kill9 t_gc_on_run t_concurrent t_many_concurrent
	# test_dns.sh
	t_dns_allowed_name t_dns_denied_name t_dns_learned_per_attempt
	t_dns_answer_kinds t_dns_any_resolver t_dns_no_bypass t_dns_tunnel
	t_dns_expiry t_dns_no_race t_dns_map_full t_dns_too_many_records
	t_dns_https_type
	t_dns_wildcard t_dns_host_ports t_dns_policy t_dns_miner_unaffected
	t_dns_upstream_down t_dns_upstream_failover t_dns_upstream_ports t_dns_upstream_unreachable
	t_dns_refused
	# test_policy.sh
	t_policy_builtin_default t_policy_per_repo t_policy_checkout_cannot_widen
	t_policy_refused t_policy_refused_symlink t_policy_invalid t_policy_check t_policy_check_pinning
	t_policy_git_remote
	# test_events.sh
	t_events_log_denials t_events_audit t_events_audit_udp_once t_events_udp_probes
	t_events_suggest t_events_status t_events_bpftool t_events_flood
	t_events_summary
	# test_requests.sh
	t_requests_recorded t_requests_tls_name t_requests_http_name t_requests_approve t_requests_deny
	t_requests_sandbox_cannot_write t_requests_live_approval t_requests_refused t_requests_half_written
	# test_shared.sh
	t_shared_set_reused t_shared_isolation t_shared_tampered
	# test_terminal.sh
	t_terminal_pty t_terminal_job_control t_terminal_forced_pty
	# test_egretd.sh
	t_egretd_attempt t_egretd_refusals t_egretd_inside_attempt t_egretd_limits
	t_egretd_uids_per_caller t_egretd_worktree t_egretd_private_places
	t_egretd_worktree_refused t_egretd_cache t_egretd_stdio_rights
	t_egretd_kill9 t_egretd_concurrent t_egretd_container t_egretd_readopt
	t_egretd_signals_stdio t_egretd_readopt_port_held t_egretd_node_miner
	t_egretd_socket_activation t_egretd_requests_json t_egretd_readopt_refused
	t_egretd_half_written
	# test_egretd_metrics.sh
	t_egretd_metrics
	# test_worktree.sh
	t_wt_gitdir_redirect t_wt_commondir_redirect t_wt_clone_pointer
	t_wt_git_metadata_readonly t_wt_harvest t_wt_swap_during_setup t_wt_world_writable t_egretd_largest_request
	# test_agents_ready.sh
	t_egretd_pass_through t_egretd_home_template t_nested_sandbox t_timeout_denied_name
	# test_egretd_terminal.sh
	t_egretd_terminal_resize t_egretd_terminal_job_control t_egretd_kill_stopped
	t_egretd_forced_pty t_egretd_terminal_restart t_egretd_status_caller
	# test_faults.sh
	t_fault_fast_commands t_fault_unit_killed_30 t_fault_setup_killed_50
	t_fault_run_full t_fault_second_egretd t_fault_second_build
	t_fault_idle_connections t_fault_record_full t_fault_reused_cgroup
	t_fault_readopt_lock_held
	# test_budgets.sh
	t_budget_upload t_budget_parallel t_budget_download t_budget_download_bare
	t_budget_per_destination t_budget_accounting_only t_budget_policy t_egretd_upload_limit
	t_budget_pinned_attribution t_budget_request t_budget_wildcard
	# test_limits.sh
	t_limits_manifest t_limits_egretd t_limits_feed t_limits_feed_bounded t_limits_unwritable
	t_limits_feed_full
	# test_request.sh
	t_request_inband t_request_egretd t_request_readopt t_limits_container
	# test_receipt.sh
	t_receipt_root t_receipt_killed t_receipt_egretd
	# test_crash.sh, last: what every test above left
	t_half_written_none
)

# === main ====================================================================

main() {
	local filter=${1:-} t problem self_cg

	if [ ! -x "$EGRET" ] || [ ! -x "$HELPERS/probe" ] || [ ! -x "$HELPERS/sink" ]; then
		echo "run.sh: need EGRET (egret binary) and HELPERS (dir with probe, sink);" \
			"got EGRET='$EGRET' HELPERS='$HELPERS'" >&2
		TESTS_FAILED=1
		summary
		exit 1
	fi
	case $EGRET in /*) ;; *) EGRET="$PWD/$EGRET" ;; esac
	case $HELPERS in /*) ;; *) HELPERS="$PWD/$HELPERS" P="$HELPERS/probe" ;; esac
	suite_helpers_visible || { echo "run.sh: cannot copy the helpers to /run/egret-tests" >&2; exit 1; }

	CG2=$(cgroup2_mount)
	problem=$(preflight_problem tmux)
	preflight_or_exit "$problem" "the integration suite" "${#TESTS[@]}"
	if ! suite_cgroup_enter; then
		echo "FAIL  suite_cgroup_enter: could not make the suite's cgroup under $CG2"
		TESTS_FAILED=1
		summary
		exit 1
	fi

	if ! world_up; then
		echo "FAIL  world_up: could not build the test network"
		TESTS_FAILED=1
		suite_cgroup_leave
		summary
		exit 1
	fi
	SINK_LOG=$WORLD_LOG
	# On any exit (also Ctrl-C mid-test) remove our attempts, then the world
	# (which kills any egret still in it); then gc removes what those
	# egrets left (attempts without --id have random ids tidy cannot
	# recognise), under the suite's cgroup only.
	trap 'test_tidy >/dev/null 2>&1; world_down; suite_gc >/dev/null 2>&1; suite_cgroup_leave; suite_helpers_drop' EXIT
	trap 'exit 130' INT TERM

	for t in "${TESTS[@]}"; do
		[ -n "$filter" ] && ! [[ $t =~ $filter ]] && continue
		run_test "$t"
	done
	summary
}

main "$@"
