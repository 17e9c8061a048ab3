# shellcheck shell=bash
# env.sh - what the privileged suites (tests/integration, tests/redteam)
# share about the machine: finding cgroup2 the way egret does, checking the
# machine can run them, and tidying after each test.
#
# The sourcing suite sets ID_PREFIX (every --id it passes starts with it),
# PIN_ROOT, STATE_ROOT, CG2, EGRET_CG_PARENT and sources world.sh first.
# SC2013: cgroup.procs holds one pid per line; word splitting is fine.
# shellcheck disable=SC2013

# COMMAND runs as a user of its own: no daemon shares it (dnsmasq in the
# test world runs as nobody), so nothing outside an attempt runs as it
# (egret refuses to start COMMAND otherwise). tools/install-deps.sh makes it.
TEST_USER=${EGRET_TEST_USER:-egret-test}
TEST_UID=$(id -u "$TEST_USER" 2>/dev/null)
TEST_GID=$(id -g "$TEST_USER" 2>/dev/null)
# shellcheck disable=SC2034 # the suites that source this use it
AS_TEST_USER=(setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --clear-groups)
# Child shells (unshare -m bash -c ...) see them too.
export TEST_USER TEST_UID TEST_GID
# What a probe prints when egret refuses its connect() or sendto(): the
# default --deny-errno (docs/CLIENTS.md). A datagram a connected UDP socket
# sends is dropped on its way out instead, and the kernel says EPERM.
# shellcheck disable=SC2034 # the suites that source this use it
REFUSED="err ECONNREFUSED"
DROPPED="err EPERM"
# Attempts running at the same time each get a uid of their own, as a
# miner's should: bare numbers, no passwd entry (egret refuses a uid that
# another attempt, or any process outside, runs as). Each suite takes a
# block of 1000 of its own (a lock held while it runs), so that suites run
# side by side (with another EGRET_TEST_USER) never share a uid, nor an
# egretd range. Usage: own_uid N (N < 1000)
suite_uids_take() {
	local n
	mkdir -p /run/egret-tests 2>/dev/null || return 0
	for ((n = 0; n < 20; n++)); do
		exec {SUITE_UIDS_FD}>"/run/egret-tests/uids-$n.lock" || continue
		if flock -n "$SUITE_UIDS_FD"; then
			SUITE_UIDS=$((270000 + n * 1000))
			suite_uids_forget
			return 0
		fi
		exec {SUITE_UIDS_FD}>&-
	done
	echo "env.sh: 20 suites hold every uid block (/run/egret-tests/uids-*.lock)" >&2
	exit 1
}
# The block is ours while we hold its lock: an owner (egretd's
# daemon/uids.h) of one of its uids was left by an earlier suite that
# failed before its egretd_stop, and would keep our callers out.
suite_uids_forget() {
	local f u
	for f in /run/egret-uids/owner-*; do
		[ -e "$f" ] || continue
		u=${f##*-}
		[ "$u" -ge "$SUITE_UIDS" ] && [ "$u" -lt $((SUITE_UIDS + 1000)) ] && rm -f "$f"
	done
	return 0
}
SUITE_UIDS=270000
[ "$(id -u)" != 0 ] || suite_uids_take

# COMMAND through egretd has a private /tmp, /var/tmp, /dev/shm and
# /run/lock (launch/view.h): helpers built there (a clone in /tmp) would be
# out of its sight. A copy of them in /run, for the suite's life.
suite_helpers_visible() {
	local d
	case $HELPERS in /tmp/* | /var/tmp/* | /dev/shm/* | /run/lock/*) ;; *) return 0 ;; esac
	d=/run/egret-tests/helpers-$$
	mkdir -p "$d" && cp -a "$HELPERS/." "$d/" && chmod 755 /run/egret-tests "$d" || return 1
	SUITE_HELPERS_COPY=$d HELPERS=$d P="$d/probe"
}

suite_helpers_drop() {
	[ -z "${SUITE_HELPERS_COPY:-}" ] || rm -rf "$SUITE_HELPERS_COPY"
}
own_uid() {
	echo $((SUITE_UIDS + $1))
}

cgroup2_mount() {
	# mountinfo: ... MOUNTPOINT(5) ... - FSTYPE SOURCE OPTS
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") {
		if ($(i + 1) == "cgroup2") { print $5; exit }
		break } }' /proc/self/mountinfo
}

# The suite's own cgroup: this shell, and all it starts from then on, in
# SUITE_CG, a child of the cgroup it ran in. Every attempt the suite
# starts lies under it (egret run's default parent, EGRET_CG_PARENT, is
# SUITE_CG/egret; an egretd attempt is a child of its caller's cgroup), so
# that the suite's gc (suite_gc) touches nothing else: the host may run
# other egrets, a real egretd among them. Call before starting anything.
suite_cgroup_enter() {
	local self
	self=$(sed -n 's/^0:://p' /proc/self/cgroup)
	SUITE_HOME_CG="$CG2${self%/}"
	SUITE_CG="$SUITE_HOME_CG/egret-suite-$$"
	mkdir "$SUITE_CG" && echo $$ >"$SUITE_CG/cgroup.procs" || return 1
	EGRET_CG_PARENT="$SUITE_CG/egret"
}

# suite_gc [ARGS...]: what the suite's own attempts left, egretd's too
# (the suite's egretds are gone by then), and nothing of anyone else's.
suite_gc() {
	timeout 30 "$EGRET" gc --under "$SUITE_CG" --unserved "$@"
}

# Back where the suite started, its cgroup gone.
suite_cgroup_leave() {
	[ -n "${SUITE_CG:-}" ] || return 0
	echo $$ >"$SUITE_HOME_CG/cgroup.procs"
	rmdir "$SUITE_CG/egret" "$SUITE_CG" 2>/dev/null
}

# Print why this machine cannot run the suite, or nothing if it can.
# Usage: preflight_problem [EXTRA_COMMAND...]
preflight_problem() {
	local c
	[ "$(id -u)" = 0 ] || { echo "not root"; return; }
	[ -n "$CG2" ] || { echo "no cgroup2 mount in /proc/self/mountinfo"; return; }
	[ -w "$CG2" ] || { echo "cgroup2 mount $CG2 is not writable"; return; }
	[ -d /sys/fs/bpf ] || { echo "no /sys/fs/bpf"; return; }
	if command -v bpftool >/dev/null && ! bpftool prog list >/dev/null 2>&1; then
		echo "bpf() unusable (bpftool prog list failed)"; return
	fi
	command -v nsenter >/dev/null || { echo "nsenter missing"; return; }
	command -v dnsmasq >/dev/null || { echo "dnsmasq missing (package dnsmasq-base)"; return; }
	command -v dig >/dev/null || { echo "dig missing (package bind9-dnsutils)"; return; }
	command -v curl >/dev/null || { echo "curl missing"; return; }
	command -v jq >/dev/null || { echo "jq missing"; return; }
	for c in "$@"; do
		command -v "$c" >/dev/null || { echo "$c missing"; return; }
	done
	[ -n "$TEST_UID" ] ||
		{ echo "no test user $TEST_USER (tools/install-deps.sh creates it)"; return; }
	if ! ip netns add "egw-$$-pf" 2>/dev/null; then
		echo "cannot create network namespaces"; return
	fi
	ip netns del "egw-$$-pf"
}

# Remove whatever a test left behind: stray processes in the client ns (not
# the loopback sink) and cgroups, pins and state of our ids. Says what it
# removed: after a passing test there should be nothing to say.
test_tidy() {
	local pid cg d
	# An egretd a failed test left running, wherever its namespace.
	if [ -n "${EGRETD_PID:-}" ] && kill -0 "$EGRETD_PID" 2>/dev/null; then
		echo "  tidy: killing egretd $EGRETD_PID"
		kill -KILL "$EGRETD_PID"
	fi
	EGRETD_PID=
	# Units of egretds a failed test left (test_egretd.sh: egretd_start).
	for cg in "${SUITE_CG:-$CG2/none}"/egretd-unit-*/; do
		[ -d "$cg" ] || continue
		echo "  tidy: killing egretd's unit $cg"
		{ echo 1 >"$cg/cgroup.kill"; } 2>/dev/null
		wait_until 5 rmdir "$cg" 2>/dev/null
	done
	for pid in $(ip netns pids "$WORLD_CLIENT" 2>/dev/null); do
		case " $WORLD_SINK_PIDS " in *" $pid "*) continue ;; esac
		echo "  tidy: killing stray pid $pid ($(tr '\0' ' ' 2>/dev/null </proc/"$pid"/cmdline))"
		kill -KILL "$pid" 2>/dev/null
	done
	# Attempt cgroups under the default parent, and custom parents (with
	# their attempts) that tests made at the cgroup2 root or in the
	# suite's cgroup.
	for cg in "$EGRET_CG_PARENT/$ID_PREFIX"-*/ "$CG2/$ID_PREFIX"-*/*/ \
		"$CG2/$ID_PREFIX"-*/ "${SUITE_CG:-$CG2/none}/$ID_PREFIX"-*/*/ \
		"${SUITE_CG:-$CG2/none}/$ID_PREFIX"-*/; do
		[ -d "$cg" ] || continue
		echo "  tidy: removing cgroup $cg"
		{ echo 1 >"$cg/cgroup.kill"; } 2>/dev/null
		wait_until 5 rmdir "$cg" 2>/dev/null
	done
	for d in "$PIN_ROOT/$ID_PREFIX"-* "$STATE_ROOT/$ID_PREFIX"-*; do
		[ -e "$d" ] || continue
		echo "  tidy: removing $d"
		rm -rf "$d"
	done
}

# End the suite here when preflight_problem found PROBLEM: with CI=true a
# failure (the privileged suites must run there), else every test skipped.
# Usage: preflight_or_exit PROBLEM "the integration suite" NTESTS
preflight_or_exit() {
	[ -z "$1" ] && return 0
	if [ "${CI:-}" = true ]; then
		echo "FAIL  preflight: $1 (CI=true: $2 must run)"
		TESTS_FAILED=1
	else
		echo "SKIP: $2 needs root, cgroup2, BPF, netns and its tools: $1"
		TESTS_SKIPPED=$3
	fi
	summary
	exit
}
