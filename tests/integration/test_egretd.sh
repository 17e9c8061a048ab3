# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016 # `A && B || fail` is meant (fail exits); $1 in single quotes is the inner shell's
# test_egretd.sh - egretd: an unprivileged caller's `egret run` goes
# through the root daemon (docs/EGRETD.md). Sourced by run.sh.
#
# egretd runs in the client namespace, as the caller does, except in
# t_egretd_container, where the caller is in a simulated container and
# egretd in namespaces of its own. The caller is $TEST_USER, never root;
# attempts get uids of the configured range, never the caller's.

EGRETD_UIDS=60100-60199

# egretd_start [CALLER_YAML]: egretd with a config of its own and its
# socket in a root directory the caller can traverse. Sets EGRETD_SOCK,
# EGRETD_PID.
egretd_start() {
	local dir="/run/egretd-test-$$" caller=${1:-"  - user: $TEST_USER
    repos: [octo/app]
    allow: true"}
	# The config where egretd trusts it: a root directory (TDIR is 1777,
	# which the trust check refuses for the file's own directory). COMMAND
	# starts in TDIR, where its caller is, and can use it (1777).
	mkdir -p "$dir" && chmod 755 "$dir"
	EGRETD_SOCK="$dir/egret.sock"
	cat >"$dir/egretd.yaml" <<CONF
version: 1
socket:
  path: $EGRETD_SOCK
  group: $TEST_GID
attempts:
  uids: $EGRETD_UIDS
callers:
$caller
CONF
	chmod 644 "$dir/egretd.yaml"
	# A variable of egretd's own, which no COMMAND may see. Its network
	# namespace: the client's, or EGRETD_NS's.
	"${EGRETD_NS[@]:-${WORLD_IN_CLIENT[@]}}" env EGRETD_T_OWN=egretd-own \
		"$(dirname "$EGRET")/egretd" --config "$dir/egretd.yaml" \
		>"$TDIR/egretd.log" 2>&1 &
	EGRETD_PID=$!
	wait_for_file "$EGRETD_SOCK" 10
}

egretd_stop() {
	kill -TERM "$EGRETD_PID" 2>/dev/null
	wait "$EGRETD_PID" 2>/dev/null
	rm -rf "$(dirname "$EGRETD_SOCK")"
}

# via ARGS...: `egret run ARGS` as the caller ($TEST_USER, no root, no
# capabilities), in the client ns; sets RC, OUT, ERR as attempt does.
via() {
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" "$@" >"$TDIR/out" 2>"$TDIR/err"
	RC=$?
	OUT=$(cat "$TDIR/out")
	ERR=$(cat "$TDIR/err")
}

# Through egretd an attempt is one: allowed flows arrive, denied ones are
# refused with nothing at the far side, COMMAND runs as a uid of the range
# on the caller's stdout, its exit status is the caller's, and the caller
# itself stays unrestricted.
t_egretd_attempt() {
	local ok deny out uid
	egretd_start
	ok=$(token ok) deny=$(token deny) out=$(token out)
	via --allow 203.0.113.10:80 -- "$P" tcp 203.0.113.10 80 "$ok"
	assert_eq 0 "$RC" "an allowed flow through egretd $(said)"
	assert_eq ok "$OUT" "what COMMAND printed, on the caller's stdout"
	world_sink_wait "$ok" "$WORLD_LOG" || fail "the allowed flow never reached the world"
	via --allow 203.0.113.10:80 -- "$P" tcp 203.0.113.11 80 "$deny"
	assert_eq 1 "$RC" "a denied flow through egretd $(said)"
	assert_eq "$REFUSED" "$OUT" "a denied flow's error"
	world_barrier tcp 203.0.113.11 80 "$(token barrier)" "$WORLD_LOG" ||
		fail "barrier to 203.0.113.11 did not arrive"
	! world_sink_has "$deny" "$WORLD_LOG" || fail "denied, yet the world got $deny"
	EGRET_T_KEEP=from-caller via --allow 203.0.113.10:80 -- \
		sh -c 'id -u; echo "${EGRET_T_KEEP-unset}|${EGRETD_T_OWN-unset}"; exit 7'
	assert_eq 7 "$RC" "COMMAND's exit status through egretd $(said)"
	assert_eq "from-caller|unset" "$(echo "$OUT" | sed -n 2p)" \
		"COMMAND's environment: the caller's, never egretd's"
	uid=$(echo "$OUT" | head -n 1)
	[ "$uid" -ge 60100 ] && [ "$uid" -le 60199 ] ||
		fail "COMMAND's uid through egretd: want one of $EGRETD_UIDS, got '$uid'"
	[ "$uid" != "$TEST_UID" ] || fail "COMMAND runs as its caller's uid $uid"
	assert_eq ok "$(world_exec_client "${AS_TEST_USER[@]}" "$P" tcp 203.0.113.11 80 "$out")" \
		"the caller itself, outside any attempt"
	egretd_stop
}

# Refused, each with one line and 125, COMMAND never run: a uid the config
# does not name, a repository the caller may not select, --allow from a
# caller without allow, anything egretd decides itself.
t_egretd_refusals() {
	local m="$TDIR/marker" cmd=(sh -c 'touch "$1"' sh "$TDIR/marker")
	egretd_start "  - user: $TEST_USER
    repos: [octo/app]"
	via -- "${cmd[@]}"
	[ "$RC" = 0 ] && [ -e "$m" ] || fail "control: COMMAND did not run through egretd $(said)"
	rm -f "$m"
	via --repo octo/other -- "${cmd[@]}"
	assert_refused "a repository the caller may not select" "$m"
	assert_contains "callers.repos" "$ERR" "why octo/other was refused"
	via --allow 203.0.113.11:80 -- "${cmd[@]}"
	assert_refused "--allow from a caller without allow" "$m"
	via --policy /tmp/p.yaml -- "${cmd[@]}"
	assert_refused "--policy through egretd" "$m"
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" setpriv --reuid=65534 --regid=65534 \
		--groups="$TEST_GID" sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" -- "${cmd[@]}" >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_refused "uid 65534, not in the config" "$m"
	assert_contains "may not launch" "$ERR" "why uid 65534 was refused"
	# A caller in a user namespace of its own (unprivileged unshare).
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		unshare --user sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" -- "${cmd[@]}" >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_refused "a caller in a user namespace of its own" "$m"
	assert_contains "user namespace" "$ERR" "why the user-namespace caller was refused"
	# A caller that connects and sends nothing holds no slot for long:
	# egretd answers with a refusal after 5 s.
	OUT=$(timeout 20 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
print(s.recv(4096)[16:].decode("ascii", "replace"))' "$EGRETD_SOCK" 2>&1)
	assert_contains "no request within 5 s" "$OUT" "an idle caller's answer"
	egretd_stop
}

# An attempt can never use egretd: a caller inside one (here an egret run
# attempt of the same uid, which the config does name) is refused.
t_egretd_inside_attempt() {
	local m="$TDIR/marker"
	egretd_start
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 -- \
		"$EGRET" run --via "$EGRETD_SOCK" -- sh -c 'touch "$1"' sh "$m"
	assert_eq 125 "$RC" "egret run through egretd from inside an attempt $(said)"
	assert_contains "inside an attempt" "$ERR" "why the attempt's request was refused"
	assert_absent "$m" "COMMAND of a request from inside an attempt"
	egretd_stop
}

# Limits: a caller at its callers.max is refused with one line while its
# attempt runs, and served again once that attempt ended.
t_egretd_limits() {
	local m="$TDIR/marker" cpid
	egretd_start "  - user: $TEST_USER
    max: 1"
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" -- sh -c 'touch "$1/first"; sleep 3' sh "$TDIR" \
		>"$TDIR/first.out" 2>&1 &
	cpid=$!
	wait_for_file "$TDIR/first" 15
	via -- sh -c 'touch "$1"' sh "$m"
	assert_refused "a second attempt over callers.max 1" "$m"
	assert_contains "callers.max" "$ERR" "why the second attempt was refused"
	reap "$cpid" 20
	assert_eq 0 "$REAPED" "the first attempt, through to its end $(cat "$TDIR/first.out")"
	via -- sh -c 'touch "$1"' sh "$m"
	[ "$RC" = 0 ] && [ -e "$m" ] || fail "after the first attempt ended, a new one $(said)"
	egretd_stop
}

# egretd's accept loop killed with SIGKILL mid-attempt: the attempt is a
# process of its own and goes on enforcing to its end - a denied flow
# after the kill is still refused, the allowed one arrives, the caller
# gets COMMAND's status - and nothing is left behind.
t_egretd_kill9() {
	local script ok deny cpid
	ok=$(token ok) deny=$(token deny)
	egretd_start
	script=$(write_script k9.sh <<'SH'
d=$1 P=$2
touch "$d/started"
i=0; while [ ! -e "$d/go" ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
"$P" tcp 203.0.113.11 80 "$4" >"$d/denied" 2>/dev/null
"$P" tcp 203.0.113.10 80 "$3" >"$d/allowed" 2>/dev/null
exit 3
SH
)
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" --allow 203.0.113.10:80 -- \
		sh "$script" "$TDIR" "$P" "$ok" "$deny" >"$TDIR/k9.out" 2>&1 &
	cpid=$!
	wait_for_file "$TDIR/started" 15
	kill -KILL "$EGRETD_PID"
	wait "$EGRETD_PID" 2>/dev/null
	touch "$TDIR/go"
	reap "$cpid" 20
	assert_eq 3 "$REAPED" "the caller's status after egretd was killed $(cat "$TDIR/k9.out")"
	assert_eq "$REFUSED" "$(cat "$TDIR/denied")" "a denied flow after egretd was killed"
	assert_eq ok "$(cat "$TDIR/allowed")" "an allowed flow after egretd was killed"
	world_sink_wait "$ok" "$WORLD_LOG" || fail "the allowed flow never reached the world"
	world_barrier tcp 203.0.113.11 80 "$(token barrier)" "$WORLD_LOG" ||
		fail "barrier to 203.0.113.11 did not arrive"
	! world_sink_has "$deny" "$WORLD_LOG" || fail "denied after the kill, yet the world got $deny"
	wait_until 10 test -z "$(find "$STATE_ROOT" -mindepth 1 -maxdepth 1 ! -name '.*' 2>/dev/null)" ||
		fail "records left after the attempt: $(ls "$STATE_ROOT")"
	rm -rf "$(dirname "$EGRETD_SOCK")"
}

# Callers at once get one uid each: egretd takes the uid's lock when it
# chooses it, so two handlers racing never pick the same one (and refuse).
t_egretd_concurrent() {
	local i pids=() uids
	egretd_start
	for i in 1 2 3 4 5; do
		timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
			sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
			"$EGRET" run --via "$EGRETD_SOCK" -- \
			sh -c 'id -u >"$1/uid.$2"; sleep 1' sh "$TDIR" "$i" \
			>"$TDIR/c.$i.out" 2>&1 &
		pids+=($!)
	done
	for i in 1 2 3 4 5; do
		reap "${pids[$((i - 1))]}" 30
		assert_eq 0 "$REAPED" "concurrent caller $i: $(cat "$TDIR/c.$i.out")"
	done
	uids=$(cat "$TDIR"/uid.* | sort -u | wc -l)
	assert_eq 5 "$uids" "distinct attempt uids of 5 concurrent callers ($(cat "$TDIR"/uid.* | tr '\n' ' '))"
	egretd_stop
}

# A caller in a simulated container (its own mount, PID, UTS, IPC and
# cgroup namespaces, the client's network namespace) and egretd in the
# host's, but for an empty network namespace of its own (it can reach
# nothing; its DNS proxy and upstream sockets must be made in the
# caller's). COMMAND must run in every namespace of its caller, in a
# child of the caller's cgroup; DNS goes to the upstream of the
# container's /etc/resolv.conf (the host's names none in the world);
# allowed and denied flows behave as they do outside.
t_egretd_container() {
	local ctr="$TDIR/ctr" cg="$CG2/$ID_PREFIX-ctr" inner cmd ok deny n rc
	local EGRETD_NS=(unshare --net --)
	ok=$(token ok) deny=$(token deny)
	egretd_start
	mkdir -p "$ctr" "$cg"
	cmd=$(write_script ctr-cmd.sh <<'SH'
d=$1 P=$2 ctr=$3
for n in mnt net pid uts ipc cgroup; do readlink "/proc/self/ns/$n"; done >"$d/cmd.ns"
cat "$ctr/marker" >"$d/cmd.marker" 2>&1
hostname >"$d/cmd.hostname"
cat /proc/self/cgroup >"$d/cmd.cgroup"
touch "$d/cmd.started"
i=0; while [ ! -e "$d/cmd.go" ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
echo "allowed: $("$P" tcp-name github.com 80 "$4" 2>/dev/null)"
echo "denied: $("$P" tcp 203.0.113.11 80 "$5" 2>/dev/null)"
SH
)
	# The container's own view: a file only its mounts have, a resolver
	# only its /etc/resolv.conf names, a hostname of its own. Then the
	# caller, as $TEST_USER, not as the container's PID 1.
	inner=$(write_script ctr-init.sh <<'SH'
set -e
ctr=$1 dns=$2; shift 2
hostname egret-ctr
mount -t tmpfs -o mode=755 tmpfs "$ctr"
echo from-the-container >"$ctr/marker"
echo "nameserver $dns" >"$ctr/resolv.conf"
mount --bind "$ctr/resolv.conf" /etc/resolv.conf
for n in mnt net pid uts ipc cgroup; do readlink "/proc/self/ns/$n"; done >"$ctr/../caller.ns"
set +e
"$@"
echo $? >"$ctr/../caller.rc"
SH
)
	"${WORLD_IN_CLIENT[@]}" sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' \
		sh "$cg" unshare --mount --uts --ipc --pid --fork --mount-proc --cgroup \
		sh "$inner" "$ctr" "$WORLD_DNS" \
		"${AS_TEST_USER[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" --allow github.com:80 -- \
		sh "$cmd" "$TDIR" "$P" "$ctr" "$ok" "$deny" >"$TDIR/ctr.out" 2>&1 &
	local cpid=$!
	wait_for_file "$TDIR/cmd.started" 20 ||
		fail "COMMAND never started in the container: $(cat "$TDIR/ctr.out" "$TDIR/egretd.log")"
	# From the host: the attempt's cgroup is a child of the container's.
	n=$(find "$cg" -mindepth 1 -maxdepth 1 -type d | wc -l)
	assert_eq 1 "$n" "attempt cgroups under the container's cgroup $cg"
	[ "$(find "$cg" -mindepth 1 -maxdepth 1 -type d -exec cat {}/cgroup.procs \; | grep -c .)" -ge 1 ] ||
		fail "no process in the attempt's cgroup under $cg (COMMAND's shell)"
	touch "$TDIR/cmd.go"
	reap "$cpid" 30
	rc=$(cat "$TDIR/caller.rc" 2>/dev/null)
	assert_eq 0 "$rc" "the caller's status in the container $(cat "$TDIR/ctr.out")"
	assert_eq "$(cat "$TDIR/caller.ns")" "$(cat "$TDIR/cmd.ns")" \
		"COMMAND's namespaces (mnt net pid uts ipc cgroup) against its caller's"
	[ "$(readlink /proc/"$EGRETD_PID"/ns/mnt)" != "$(sed -n 1p "$TDIR/cmd.ns")" ] &&
		[ "$(readlink /proc/"$EGRETD_PID"/ns/net)" != "$(sed -n 2p "$TDIR/cmd.ns")" ] ||
		fail "control: egretd shares the container's namespaces"
	assert_eq from-the-container "$(cat "$TDIR/cmd.marker")" "a file only the container's mounts have"
	assert_eq egret-ctr "$(cat "$TDIR/cmd.hostname")" "COMMAND's hostname"
	[[ "$(grep '^0::' "$TDIR/cmd.cgroup")" =~ ^0::/[0-9a-f]+$ ]] ||
		fail "COMMAND's cgroup v2, in the container's cgroup namespace: want a child of its root, got '$(cat "$TDIR/cmd.cgroup")'"
	assert_contains "allowed: ok" "$(cat "$TDIR/ctr.out")" "an allowed name, resolved through the container's resolver"
	assert_contains "denied: $REFUSED" "$(cat "$TDIR/ctr.out")" "a denied address from the container"
	world_sink_wait "$ok" "$WORLD_LOG" || fail "the allowed flow never reached the world"
	world_barrier tcp 203.0.113.11 80 "$(token barrier)" "$WORLD_LOG" ||
		fail "barrier to 203.0.113.11 did not arrive"
	! world_sink_has "$deny" "$WORLD_LOG" || fail "denied, yet the world got $deny"
	assert_eq 0 "$(find "$cg" -mindepth 1 -maxdepth 1 -type d | wc -l)" \
		"attempt cgroups left under the container's"
	rmdir "$cg"
	egretd_stop
}
