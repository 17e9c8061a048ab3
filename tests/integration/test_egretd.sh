# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016 # `A && B || fail` is meant (fail exits); $1 in single quotes is the inner shell's
# test_egretd.sh - egretd: an unprivileged caller's `egret run` goes
# through the root daemon (docs/EGRETD.md). Sourced by run.sh.
#
# egretd runs in the client namespace, as the caller does, except in
# t_egretd_container, where the caller is in a simulated container and
# egretd in namespaces of its own. The caller is $TEST_USER, never root;
# attempts get uids of the configured range, never the caller's.

EGRETD_UIDS=$(own_uid 100)-$(own_uid 199)

# egretd_config [CALLER_YAML [ATTEMPTS_YAML]]: egretd's config in a root
# directory the caller can traverse, where egretd trusts it (TDIR is 1777,
# which the trust check refuses for the file's own directory). Sets
# EGRETD_SOCK, EGRETD_CONF. EGRETD_DIR names another directory (a second
# egretd).
egretd_config() {
	local dir=${EGRETD_DIR:-/run/egretd-test-$$} caller=${1:-"  - user: $TEST_USER
    repos: [octo/app]
    allow: true"} more=${2:-}
	mkdir -p "$dir" && chmod 755 "$dir"
	# COMMAND starts where its caller is, and through egretd that must be
	# the caller's own directory (launch/view.h): the test's is made the
	# caller's, and COMMAND sees it as its own, inside a private /tmp.
	chown "$TEST_UID:$TEST_GID" "$TDIR"
	EGRETD_SOCK="$dir/egret.sock" EGRETD_CONF="$dir/egretd.yaml"
	cat >"$EGRETD_CONF" <<CONF
version: 1
socket:
  path: $EGRETD_SOCK
  group: $TEST_GID
attempts:
  uids: ${EGRETD_UID_RANGE:-$EGRETD_UIDS}
  state_dir: $dir/state
$more
callers:
$caller
CONF
	chmod 644 "$EGRETD_CONF"
}

# egretd_start [CALLER_YAML [ATTEMPTS_YAML]]: egretd with egretd_config's
# file, in a cgroup of its own under the suite's (EGRETD_UNIT: a fresh
# one each time, as systemd makes a unit's). EGRETD_T_KILL_AT: egretd's
# processes die at that file's rename (killat.so, $TDIR/killed). COMMAND starts in TDIR, where
# its caller is, which becomes the caller's. Sets EGRETD_SOCK, EGRETD_PID;
# returns once egretd accepts connections.
egretd_start() {
	egretd_config "$@"
	# A socket a killed egretd left would take connections nobody serves.
	rm -f "$EGRETD_SOCK"
	EGRETD_UNIT="$SUITE_CG/egretd-unit-$BASHPID-$RANDOM"
	mkdir "$EGRETD_UNIT" || fail "cannot make egretd's cgroup $EGRETD_UNIT"
	# A unit cgroup reused after a kill, as a supervisor other than
	# systemd may leave it (DEPLOYMENT.md, "A reused cgroup").
	[ -z "${EGRETD_UNIT_KILLED:-}" ] || echo 1 >"$EGRETD_UNIT/cgroup.kill"
	# A variable of egretd's own, which no COMMAND may see. Its network
	# namespace: the client's, or EGRETD_NS's.
	"${EGRETD_NS[@]:-${WORLD_IN_CLIENT[@]}}" sh -c \
		'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$EGRETD_UNIT" \
		env EGRETD_T_OWN=egretd-own ${EGRETD_T_KILL_AT:+LD_PRELOAD="$HELPERS/killat.so" \
		EGRET_T_KILL_AT="$EGRETD_T_KILL_AT" EGRET_T_KILL_LOG="$TDIR/killed"} \
		"$(dirname "$EGRET")/egretd" --config "$EGRETD_CONF" ${EGRETD_VERBOSE:+-v} \
		>>"$TDIR/egretd.log" 2>&1 &
	EGRETD_PID=$!
	egretd_wait_ready
}

# egretd_wait_ready: a connection to EGRETD_SOCK succeeds (not just its
# file: a stale one, or one made before listen(), takes none); egretd must
# not have died meanwhile.
egretd_wait_ready() {
	local i
	for ((i = 0; i < 300; i++)); do
		/usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])' "$EGRETD_SOCK" 2>/dev/null && return 0
		kill -0 "$EGRETD_PID" 2>/dev/null ||
			fail "egretd exited before it listened: $(cat "$TDIR/egretd.log")"
		sleep 0.1
	done
	fail "egretd never listened on $EGRETD_SOCK: $(cat "$TDIR/egretd.log")"
}

# The records of this test's egretd's attempts (state.h: instance), by
# path: never another egretd's, nor another suite's.
our_records() {
	grep -lx "instance=$EGRETD_SOCK" "$STATE_ROOT"/* 2>/dev/null
}

# No record of ours is left (a function: wait_until runs it again and
# again, where a $(...) argument would be read once).
no_records() {
	[ -z "$(our_records)" ]
}

# egretd_kill_all: egretd's unit killed (cgroup.kill: the accept loop and
# each attempt's process, none escaping by a fork in between), as systemd
# kills a unit; the attempts' keepers and COMMANDs live in the callers'
# cgroups and stay. The unit's cgroup goes: a restart gets a fresh one.
egretd_kill_all() {
	[ -n "$(pgrep -P "$EGRETD_PID")" ] ||
		fail "control: egretd serves the attempt from no process of its own"
	echo 1 >"$EGRETD_UNIT/cgroup.kill"
	wait "$EGRETD_PID" 2>/dev/null
	wait_until 10 rmdir "$EGRETD_UNIT" 2>/dev/null ||
		fail "egretd's killed unit $EGRETD_UNIT still holds $(cat "$EGRETD_UNIT/cgroup.procs")"
}

# via_bg NAME ARGS...: `egret run --via SOCK ARGS` as the caller, in the
# background, its output in $TDIR/NAME.out; sets CPID.
via_bg() {
	local name=$1
	shift
	timeout -k 5 120 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" "$@" >"$TDIR/$name.out" 2>&1 &
	CPID=$!
}

# A second caller: a bare uid of the suite's (no passwd entry), in the
# socket's group. via_b ARGS...: `egret run --via` as it, as via does, in
# a directory of its own.
CALLER_B_UID=$(own_uid 900)
AS_CALLER_B=(setpriv --reuid="$CALLER_B_UID" --regid="$TEST_GID" --groups="$TEST_GID" --inh-caps=-all)
via_b() {
	mkdir -p "$TDIR/b" && chown "$CALLER_B_UID:$TEST_GID" "$TDIR/b"
	VIA_DIR=$TDIR/b via_as AS_CALLER_B "$@"
}

# The uids of the range that this suite's callers own (daemon/uids.h) go
# with the test's egretd: the next test starts with a range nobody owns.
uids_forget() {
	local f first=${EGRETD_UID_RANGE:-$EGRETD_UIDS} u
	local last=${first#*-}
	first=${first%-*}
	for f in /run/egret-uids/owner-*; do
		[ -e "$f" ] || continue
		u=${f##*-}
		[ "$u" -ge "$first" ] && [ "$u" -le "$last" ] || continue
		case $(cat "$f") in "$TEST_UID" | "$CALLER_B_UID") rm -f "$f" ;; esac
	done
}

egretd_stop() {
	uids_forget
	kill -TERM "$EGRETD_PID" 2>/dev/null
	wait "$EGRETD_PID" 2>/dev/null
	EGRETD_PID=
	[ -z "${EGRETD_UNIT:-}" ] || wait_until 10 rmdir "$EGRETD_UNIT" 2>/dev/null ||
		fail "egretd's unit $EGRETD_UNIT still holds $(cat "$EGRETD_UNIT/cgroup.procs") after it stopped"
	EGRETD_UNIT=
	rm -rf "$(dirname "$EGRETD_SOCK")"
}

# via ARGS...: `egret run ARGS` as the caller ($TEST_USER, no root, no
# capabilities), in the client ns; sets RC, OUT, ERR as attempt does.
via() {
	via_as AS_TEST_USER "$@"
}

# via_as ARRAY ARGS...: the same as the caller that the command prefix in
# the array named ARRAY makes, in VIA_DIR (default: TDIR).
via_as() {
	local -n as=$1
	shift
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "${as[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "${VIA_DIR:-$TDIR}" \
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
	[ "$uid" -ge "$(own_uid 100)" ] && [ "$uid" -le "$(own_uid 199)" ] ||
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

# runs_as PID UID: process PID runs as UID (its /proc directory's owner).
runs_as() {
	[ "$(stat -c %u "/proc/$1" 2>/dev/null)" = "$2" ]
}

# Attempt uids are one caller's (daemon/uids.h): another caller never gets
# a uid that the first one's attempt ran as, and a caller that keeps its
# uids busy (here: root holds a process as each, as an attempt's leftover
# would) is refused at its share (2 x max) while the other is served.
t_egretd_uids_per_caller() {
	local a1 a2 b1 holders=() m="$TDIR/marker"
	EGRETD_UID_RANGE=$(own_uid 300)-$(own_uid 303) egretd_start "  - user: $TEST_USER
    max: 1
  - uid: $CALLER_B_UID
    max: 1" "  max: 2"
	via -- id -u
	assert_eq 0 "$RC" "caller A's first attempt $(said)"
	a1=$OUT
	via_b -- id -u
	assert_eq 0 "$RC" "caller B's first attempt $(said)"
	b1=$OUT
	[ "$a1" != "$b1" ] || fail "callers A and B both ran as uid $a1"
	assert_eq "$TEST_UID" "$(cat "/run/egret-uids/owner-$a1")" "the owner of uid $a1"
	setpriv --reuid="$a1" --regid="$a1" --clear-groups sleep 60 &
	holders+=($!)
	# Busy only once the holder runs as the uid (setpriv starts as root).
	wait_until 10 runs_as "$!" "$a1" || fail "the holder of uid $a1 never ran as it"
	via -- id -u
	assert_eq 0 "$RC" "caller A with uid $a1 busy $(said)"
	a2=$OUT
	[ "$a2" != "$a1" ] && [ "$a2" != "$b1" ] || fail "caller A's second uid: $a2 (had $a1, B has $b1)"
	setpriv --reuid="$a2" --regid="$a2" --clear-groups sleep 60 &
	holders+=($!)
	wait_until 10 runs_as "$!" "$a2" || fail "the holder of uid $a2 never ran as it"
	via -- sh -c 'touch "$1"' sh "$m"
	assert_refused "caller A with both uids of its share busy" "$m"
	assert_contains "share" "$ERR" "why caller A was refused"
	via_b -- id -u
	assert_eq 0 "$RC" "caller B while A holds its share $(said)"
	assert_eq "$b1" "$OUT" "caller B's uid: its own again"
	kill "${holders[@]}" 2>/dev/null
	wait "${holders[@]}" 2>/dev/null
	egretd_stop
}

# Through egretd the agent works in its caller's worktree as its owner
# (launch/view.h): in a `git clone` and in a `git worktree add` it edits,
# creates files and directories and commits, with the caller's umask, in
# a HOME of its own that the next attempt does not see. On disk every file
# stays the caller's, so the caller then modifies, commits, gcs and
# deletes the whole tree; nothing is left that an attempt uid owns.
t_egretd_worktree() {
	local d uid uids="" git=(git -c user.name=caller -c user.email=caller@example.invalid)
	egretd_start
	"${AS_TEST_USER[@]}" sh -c 'set -e; cd "$1"; git init -q origin; cd origin
		echo one >a; git add a; git -c user.name=c -c user.email=c@x commit -qm init
		cd ..; git clone -q origin clone; git -C clone worktree add -q ../wt' sh "$TDIR" ||
		fail "the caller's clone and worktree"
	for d in clone wt; do
		umask 0002
		VIA_DIR=$TDIR/$d via -- sh -c 'set -e; umask; id -u; echo "$HOME"
			test ! -e "$HOME/mine"; touch "$HOME/mine"
			echo edit >>a; mkdir -p src/deep; echo new >src/deep/f
			git -c user.name=agent -c user.email=agent@x add -A
			git -c user.name=agent -c user.email=agent@x commit -qm agent
			stat -c %a src/deep/f; git status --porcelain | wc -l'
		umask 0022
		assert_eq 0 "$RC" "the agent's work in the $d $(said)"
		uid=$(echo "$OUT" | sed -n 2p)
		uids="$uids $uid"
		assert_eq "0002" "$(echo "$OUT" | sed -n 1p)" "COMMAND's umask: the caller's"
		assert_eq "/run/egret-home" "$(echo "$OUT" | sed -n 3p)" "COMMAND's HOME"
		assert_eq "664" "$(echo "$OUT" | sed -n 4p)" "the mode of a file the agent made"
		assert_eq "0" "$(echo "$OUT" | sed -n 5p)" "changes left uncommitted"
		assert_eq "$TEST_UID" "$(stat -c %u "$TDIR/$d/src/deep/f")" "the owner, on disk, of the agent's file"
		"${AS_TEST_USER[@]}" sh -c 'set -e; cd "$1"; echo caller >>src/deep/f; rm -rf src/deep
			'"${git[*]}"' add -A; '"${git[*]}"' commit -qm caller; git gc -q' sh "$TDIR/$d" ||
			fail "the caller modifies, commits and gcs the agent's work in the $d"
	done
	for uid in $uids; do
		assert_eq "" "$(find "$TDIR" /tmp /var/tmp /dev/shm /run/lock -xdev -uid "$uid" 2>/dev/null)" \
			"files of attempt uid $uid"
	done
	"${AS_TEST_USER[@]}" rm -rf "$TDIR/origin" "$TDIR/clone" "$TDIR/wt" ||
		fail "the caller deletes the whole tree"
	egretd_stop
}

# egretd never uses its own rights for the caller (issue 27): a FIFO only
# root may open, handed to egret run as an O_PATH fd (which needs no right
# on the file) on stdin, stdout or stderr, with and without --pty, is
# refused with 125 before anything runs: nothing of COMMAND's reaches the
# FIFO, nothing of root's comes out of it. (With --pty, egretd's root
# worker reopened it: the output went into root's FIFO, root's secret
# came back.) A stdin open only for writing is refused alike.
t_egretd_stdio_rights() {
	local in="$TDIR/root-in" out="$TDIR/root-out" m="$TDIR/marker" tok secret i pty
	local pids=()
	tok=$(token cmd) secret=$(token secret)
	egretd_start
	mkfifo -m 600 "$in" "$out"
	timeout 60 sh -c 'cat "$1" >"$2"' sh "$out" "$TDIR/out.log" &
	pids+=($!)
	timeout 60 sh -c 'echo "$1" >"$2"' sh "$secret" "$in" &
	pids+=($!)
	for pty in --pty ""; do
		for i in 0 1 2; do
			f=$out
			[ "$i" = 0 ] && f=$in
			timeout -k 5 30 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
				sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" /usr/bin/python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_PATH)
os.dup2(fd, int(sys.argv[2]))
os.execv(sys.argv[3], sys.argv[3:])' "$f" "$i" "$EGRET" run --via "$EGRETD_SOCK" $pty -- \
				sh -c 'echo "$1"; cat; echo "$1" >&2; touch "$2"' sh "$tok" "$m" \
				>"$TDIR/o.$i" 2>"$TDIR/e.$i"
			RC=$? OUT=$(cat "$TDIR/o.$i") ERR=$(cat "$TDIR/e.$i")
			[[ $OUT != *"$secret"* ]] || fail "root's secret came out of its FIFO (fd $i $pty)"
			if [ "$i" != 0 ] && wait_until 2 test -s "$TDIR/out.log"; then
				fail "COMMAND's output reached root's FIFO (fd $i $pty): $(cat "$TDIR/out.log")"
			fi
			assert_eq 125 "$RC" "an O_PATH fd of root's FIFO as fd $i ${pty:-without a pty} $(said)"
			assert_absent "$m" "COMMAND, with an O_PATH fd $i ${pty:-without a pty}"
			[ "$i" = 2 ] || assert_contains "O_PATH" "$ERR" "why fd $i was refused"
		done
	done
	via -- true 0>"$TDIR/w-only"
	assert_eq 125 "$RC" "a stdin open only for writing $(said)"
	assert_contains "stdin is not open for reading" "$ERR" "why"
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	egretd_stop
}

# callers.cache (an operator's choice): a directory of the caller's is
# every attempt's HOME/.cache, mapped like its worktree, with npm's and
# Go's module caches sent there (a --setenv still decides). What one
# attempt leaves, the next reads; on disk it is the caller's. A cache the
# caller does not own is refused with one line.
t_egretd_cache() {
	local c="$TDIR/cache" m="$TDIR/marker"
	mkdir "$c" && chown "$TEST_UID:$TEST_GID" "$c"
	egretd_start "  - user: $TEST_USER
    cache: $c"
	via -- sh -c 'echo kept >"$HOME/.cache/left"; echo "$npm_config_cache $GOMODCACHE"'
	assert_eq 0 "$RC" "the first attempt $(said)"
	assert_eq "/run/egret-home/.cache/npm /run/egret-home/.cache/go-mod" "$OUT" "the caches' variables"
	assert_eq "$TEST_UID" "$(stat -c %u "$c/left")" "the owner on disk of what the attempt cached"
	via --setenv GOMODCACHE=/elsewhere -- sh -c 'cat "$HOME/.cache/left"; echo "$GOMODCACHE"'
	assert_eq "kept
/elsewhere" "$OUT" "the next attempt reads the cache; --setenv decides $(said)"
	egretd_stop
	chown root "$c"
	egretd_start "  - user: $TEST_USER
    cache: $c"
	via -- touch "$m"
	assert_refused "a cache the caller does not own" "$m"
	assert_contains "cache directory $c is not its caller's" "$ERR" "why"
	egretd_stop
}

# Nothing an attempt writes outside its worktree outlives it: files in
# /tmp, /var/tmp, /dev/shm and /run/lock, SysV IPC objects (all the
# attempt's own, in fresh instances). Before the view they stayed, owned
# by a uid the next attempt gets.
t_egretd_private_places() {
	local tok p uid
	tok=$(token left)
	egretd_start
	via -- sh -c 'for p in /tmp /var/tmp /dev/shm /run/lock; do echo x >"$p/$1" && echo "made $p"; done
		ipcmk -M 4096 >/dev/null && ipcmk -S 1 >/dev/null && ipcmk -Q >/dev/null && echo ipc; id -u' sh "$tok"
	assert_eq 0 "$RC" "the attempt $(said)"
	assert_contains "made /tmp" "$OUT" "COMMAND writes its /tmp"
	assert_contains "ipc" "$OUT" "COMMAND makes SysV IPC objects"
	uid=$(echo "$OUT" | tail -n 1)
	for p in /tmp /var/tmp /dev/shm /run/lock; do
		assert_absent "$p/$tok" "what the attempt left in $p"
	done
	assert_eq "" "$(ipcs -c | awk -v u="$uid" '$0 ~ /^[0-9]/ && $3 == u')" "SysV IPC objects of uid $uid"
	egretd_stop
}

# The start directory must be the caller's: egretd never lends its rights
# (a root-owned one is refused, and so is the caller's own behind a
# directory it cannot search); one on overlayfs (a container's writable
# layer) cannot be idmapped, and says so. One line each, 125. A COMMAND
# that cannot start ends the attempt (127), never hangs it.
t_egretd_worktree_refused() {
	local m="$TDIR/marker" ov="$TDIR/ov"
	egretd_start
	mkdir -p "$TDIR/roots" "$ov/l" "$ov/u" "$ov/w" "$ov/m"
	VIA_DIR=$TDIR/roots via -- touch "$m"
	assert_refused "a start directory of root's" "$m"
	assert_contains "is not its caller's" "$ERR" "why root's directory was refused"
	# The caller's own directory, behind one it cannot search: egretd
	# walks the path with the caller's rights, not its own.
	mkdir -m 700 "$TDIR/locked" && mkdir "$TDIR/locked/mine" &&
		chown "$TEST_UID:$TEST_GID" "$TDIR/locked/mine" || fail "make $TDIR/locked/mine"
	via --chdir "$TDIR/locked/mine" -- touch "$m"
	assert_refused "the caller's directory behind one it cannot search" "$m"
	assert_contains "its caller cannot reach it" "$ERR" "why"
	mount -t overlay overlay -o "lowerdir=$ov/l,upperdir=$ov/u,workdir=$ov/w" "$ov/m" ||
		fail "control: mount an overlayfs"
	mkdir "$ov/m/wt" && chown "$TEST_UID:$TEST_GID" "$ov/m/wt"
	VIA_DIR=$ov/m/wt via -- touch "$m"
	umount "$ov/m"
	assert_refused "a worktree on overlayfs" "$m"
	assert_contains "overlayfs" "$ERR" "why the overlayfs worktree was refused"
	# A COMMAND that fails before it runs, under its keeper: the keeper
	# waited for the supervisor, which waited for the keeper.
	via -- "$TDIR/no-such-command"
	assert_eq 127 "$RC" "a COMMAND that does not exist, through egretd $(said)"
	assert_contains "no-such-command" "$ERR" "what egret said of it"
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
		"$EGRET" run --via "$EGRETD_SOCK" -- sh -c 'touch "$1/first"
			i=0; while [ ! -e "$1/go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done' sh "$TDIR" \
		>"$TDIR/first.out" 2>&1 &
	cpid=$!
	wait_for_file "$TDIR/first" 15
	via -- sh -c 'touch "$1"' sh "$m"
	assert_refused "a second attempt over callers.max 1" "$m"
	assert_contains "callers.max" "$ERR" "why the second attempt was refused"
	# The first attempt runs until it is told to end (here, after the
	# refusal), however long the refusal took.
	touch "$TDIR/go"
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
	wait_until 10 no_records ||
		fail "records left after the attempt: $(our_records)"
	EGRETD_PID=
	egretd_stop
}

# A handler killed between writing one of egretd's files whole and
# renaming it into place (killat.so: the worst moment), for a uid's owner
# (/run/egret-uids) and for an attempt's argv (/run/egretd-attempts):
# the attempt is refused, and egretd's next start leaves no hidden file of
# either behind. The control: each was there when its writer died.
t_egretd_half_written() {
	local range f
	range=$(own_uid 320)-$(own_uid 321)
	EGRETD_UID_RANGE=$range EGRETD_T_KILL_AT=".owner-$(own_uid 320).new-" egretd_start "" "  max: 2"
	via -- true
	[ "$RC" != 0 ] || fail "control: the attempt ran though its handler died at the owner's rename $(said)"
	EGRETD_UID_RANGE=$range egretd_stop
	EGRETD_UID_RANGE=$range EGRETD_T_KILL_AT=".argv.new-" egretd_start "" "  max: 2"
	via -- true
	[ "$RC" != 0 ] || fail "control: the attempt ran though its handler died at the argv's rename $(said)"
	EGRETD_UID_RANGE=$range egretd_stop
	assert_contains "/run/egret-uids/.owner-$(own_uid 320).new-" "$(cat "$TDIR/killed" 2>/dev/null)" \
		"control: the owner's hidden file when its writer died"
	assert_contains "/run/egretd-attempts/." "$(cat "$TDIR/killed" 2>/dev/null)" \
		"control: the argv's hidden file when its writer died"
	EGRETD_UID_RANGE=$range egretd_start "" "  max: 2"
	# Swept as its loop starts, which may be just after it listens.
	while read -r f; do
		wait_until 20 test ! -e "$f" ||
			fail "a hidden file of a killed writer after egretd's next start: $f"
	done <"$TDIR/killed"
	via -- true
	assert_eq 0 "$RC" "an attempt after the restart $(said)"
	EGRETD_UID_RANGE=$range egretd_stop
}

# Callers at once get one uid each: egretd takes the uid's lock when it
# chooses it, so two handlers racing never pick the same one (and refuse).
t_egretd_concurrent() {
	local i pids=() uids script
	egretd_start
	# Each COMMAND, its uid written, stays until all five have written
	# theirs (bounded): the five attempts overlap however slowly they start.
	script=$(write_script conc.sh <<'SH'
id -u >"$1/uid.$2"
i=0
while [ $i -lt 300 ]; do
	n=0
	for f in "$1"/uid.*; do [ -e "$f" ] && n=$((n + 1)); done
	[ $n -ge 5 ] && exit 0
	sleep 0.1; i=$((i + 1))
done
echo "attempt $2: the other attempts never ran beside it" >&2
exit 1
SH
)
	for i in 1 2 3 4 5; do
		timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
			sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
			"$EGRET" run --via "$EGRETD_SOCK" -- \
			sh "$script" "$TDIR" "$i" \
			>"$TDIR/c.$i.out" 2>&1 &
		pids+=($!)
	done
	for i in 1 2 3 4 5; do
		reap "${pids[$((i - 1))]}" 50
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
	local ctr="$TDIR/ctr" cg="$SUITE_CG/$ID_PREFIX-ctr" inner cmd ok deny n rc
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
	# Its network, PID, UTS and cgroup namespaces are its caller's; its
	# mount and IPC namespaces its own (launch/view.h).
	assert_eq "$(sed -n '2,4p;6p' "$TDIR/caller.ns")" "$(sed -n '2,4p;6p' "$TDIR/cmd.ns")" \
		"COMMAND's namespaces (net pid uts cgroup) against its caller's"
	[ "$(sed -n 1p "$TDIR/caller.ns")" != "$(sed -n 1p "$TDIR/cmd.ns")" ] &&
		[ "$(sed -n 5p "$TDIR/caller.ns")" != "$(sed -n 5p "$TDIR/cmd.ns")" ] ||
		fail "COMMAND shares its caller's mount or IPC namespace: $(cat "$TDIR/cmd.ns")"
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

# egretd dies mid-attempt with every process it had (a unit's cgroup
# killed), and comes back: while it is down the pinned programs still
# refuse a denied address and DNS fails closed (nothing of it reaches the
# world); the new egretd re-adopts the attempt (its DNS proxy on the same
# port: an allowed name resolves again), the client reconnects by the
# attempt's id and gets COMMAND's status, and nothing is left after.
t_egretd_readopt() {
	local script cpid before ok deny down up id n
	ok=$(token ok) deny=$(token deny) down=$(token down) up=$(token up)
	egretd_start
	script=$(write_script ra.sh <<'SH'
d=$1 P=$2
wait_for() { i=0; while [ ! -e "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done; }
echo "before: $("$P" tcp-name github.com 80 "$3" 4 2>/dev/null)" >"$d/ra.before"
touch "$d/ra.started"
wait_for "$d/ra.down"
echo "down-denied: $("$P" tcp 203.0.113.11 80 "$4" 2>/dev/null)" >"$d/ra.down.out"
echo "down-name: $("$P" tcp-name github.com 80 "$5" 4 2>/dev/null)" >>"$d/ra.down.out"
touch "$d/ra.down.done"
wait_for "$d/ra.up"
i=0; r=
while [ $i -lt 50 ]; do
	r=$("$P" tcp-name github.com 80 "$6" 4 2>/dev/null) && break
	sleep 0.2; i=$((i + 1))
done
echo "up-name: $r" >"$d/ra.up.out"
echo "up-denied: $("$P" tcp 203.0.113.11 80 "$4-up" 2>/dev/null)" >>"$d/ra.up.out"
exit 3
SH
)
	# The caller's resolver is the world's: a mount namespace of its own
	# with its own /etc/resolv.conf, as a container has.
	echo "nameserver $WORLD_DNS" >"$TDIR/ra.resolv"
	timeout -k 5 120 "${WORLD_IN_CLIENT[@]}" unshare --mount sh -c \
		'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$TDIR/ra.resolv" \
		"${AS_TEST_USER[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" --allow github.com:80 -- \
		sh "$script" "$TDIR" "$P" "$ok" "$deny" "$down" "$up" >"$TDIR/ra.out" 2>&1 &
	cpid=$!
	wait_for_file "$TDIR/ra.started" 20 || fail "COMMAND never started: $(cat "$TDIR/ra.out")"
	assert_eq "before: ok" "$(cat "$TDIR/ra.before")" "an allowed name before egretd died"
	id=$(basename "$(our_records)")
	[ -n "$id" ] || fail "no record of the attempt in $STATE_ROOT"
	egretd_kill_all
	before=$(world_dns_count github.com)
	touch "$TDIR/ra.down"
	wait_for_file "$TDIR/ra.down.done" 30 || fail "COMMAND's down phase never ended"
	assert_eq "down-denied: $REFUSED" "$(sed -n 1p "$TDIR/ra.down.out")" \
		"a denied address while egretd is down"
	[[ "$(sed -n 2p "$TDIR/ra.down.out")" != "down-name: ok" ]] ||
		fail "an allowed name resolved while egretd was down (DNS must fail closed)"
	world_dns_barrier "$(token barrier)" || fail "DNS barrier did not arrive"
	assert_eq "$before" "$(world_dns_count github.com)" \
		"queries for github.com that reached the world while egretd was down"
	egretd_start
	touch "$TDIR/ra.up"
	reap "$cpid" 60
	assert_eq 3 "$REAPED" "the caller's status through a re-adopting egretd $(cat "$TDIR/ra.out" "$TDIR/egretd.log")"
	assert_contains "reconnecting" "$(cat "$TDIR/ra.out")" "the client's word that it reconnected"
	# One figure: what the client says it waits is what DEPLOYMENT.md
	# says both sides wait.
	n=$(sed -n 's/.*reconnecting (for up to \([0-9]*\) s).*/\1/p' "$TDIR/ra.out" | head -n 1)
	grep -qF "reconnect for up to $n s, and a re-adopted attempt waits up to $n s" \
		"$HERE/../../docs/DEPLOYMENT.md" ||
		fail "the client waits $n s; docs/DEPLOYMENT.md says otherwise"

	assert_eq "up-name: ok" "$(sed -n 1p "$TDIR/ra.up.out")" "an allowed name after re-adoption"
	assert_eq "up-denied: $REFUSED" "$(sed -n 2p "$TDIR/ra.up.out")" "a denied address after re-adoption"
	world_sink_wait "$up" "$WORLD_LOG" || fail "the allowed flow after re-adoption never reached the world"
	world_barrier tcp 203.0.113.11 80 "$(token barrier)" "$WORLD_LOG" ||
		fail "barrier to 203.0.113.11 did not arrive"
	! world_sink_has "$deny" "$WORLD_LOG" || fail "denied while egretd was down, yet the world got $deny"
	! world_sink_has "$down" "$WORLD_LOG" || fail "an allowed name's flow while DNS was down reached the world"
	wait_until 10 no_records ||
		fail "records left after the re-adopted attempt: $(our_records)"
	assert_eq "" "$(ls /run/egretd-attempts/"$id".* 2>/dev/null)" "egretd's files of the attempt left behind"
	egretd_stop
}

# The caller's stdio and signals: COMMAND reads the caller's stdin and
# writes its stderr; SIGTERM and SIGINT sent to the client reach COMMAND
# (its traps run, its status is the caller's); a client killed outright
# ends the attempt, and its cgroup and record go.
t_egretd_signals_stdio() {
	local cpid sig
	egretd_start
	OUT=$(printf 'hello\n' | timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" -- \
		sh -c 'read -r x; echo "got:$x"; echo "to-stderr" >&2' 2>"$TDIR/err")
	assert_eq "got:hello" "$OUT" "COMMAND read the caller's stdin, wrote its stdout"
	assert_contains "to-stderr" "$(cat "$TDIR/err")" "COMMAND's stderr, the caller's"
	for sig in TERM INT; do
		rm -f "$TDIR/sig.ready" "$TDIR/sig.got"
		"${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
			sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
			"$EGRET" run --via "$EGRETD_SOCK" -- sh -c \
			'trap "echo $2 >\"$1/sig.got\"; exit 9" "$2"; touch "$1/sig.ready"
			 i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done' \
			sh "$TDIR" "$sig" >"$TDIR/sig.out" 2>&1 &
		cpid=$!
		wait_for_file "$TDIR/sig.ready" 20 || fail "COMMAND never started: $(cat "$TDIR/sig.out")"
		kill -"$sig" "$cpid"
		reap "$cpid" 20
		assert_eq 9 "$REAPED" "the caller's status after SIG$sig $(cat "$TDIR/sig.out")"
		assert_eq "$sig" "$(cat "$TDIR/sig.got" 2>/dev/null)" "what COMMAND's trap saw"
	done
	rm -f "$TDIR/sig.ready"
	"${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" -- sh -c \
		'touch "$1/sig.ready"; while :; do date +%s%N >"$1/sig.beat"; sleep 0.1; done' \
		sh "$TDIR" >"$TDIR/sig.out" 2>&1 &
	cpid=$!
	wait_for_file "$TDIR/sig.ready" 20 || fail "COMMAND never started: $(cat "$TDIR/sig.out")"
	kill -KILL "$cpid"
	wait "$cpid" 2>/dev/null
	wait_until 10 no_records ||
		fail "the attempt of a killed client is still there: $(our_records)"
	local beat
	beat=$(cat "$TDIR/sig.beat")
	sleep 0.5
	assert_eq "$beat" "$(cat "$TDIR/sig.beat")" "COMMAND's heartbeat after its client was killed"
	egretd_stop
}

# While egretd is down the attempt's keeper holds the DNS proxy's
# listeners: nobody can take the port the programs send DNS to (COMMAND,
# to answer its own redirected queries; an ephemeral bind of anyone in
# the namespace, such as another re-adopting egret's upstream probe,
# which tore attempts down at random after a restart). A query sent
# while egretd is down is answered by the egretd that re-adopts it, and
# the caller gets COMMAND's status.
t_egretd_readopt_port_held() {
	local script cpid port range
	egretd_start
	script=$(write_script rp.sh <<'SH'
d=$1
touch "$d/rp.started"
i=0; while [ ! -e "$d/rp.down" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
# The port the programs redirect DNS to (an attempt can read it from
# /proc/net/udp while the proxy runs; the test hands it over).
exec python3 -c '
import socket, struct, sys
d = sys.argv[1]
port = int(open(d + "/rp.down").read())
said = []
for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
    t = socket.socket(socket.AF_INET, kind)
    try:
        t.bind(("127.0.0.1", port))
        said.append("bound")
    except OSError as e:
        said.append("errno %d" % e.errno)
open(d + "/rp.bind", "w").write(" ".join(said) + "\n")
# A query while egretd is down (any port-53 address: the programs send
# it to the proxy), for a name no policy allows: the proxy itself says
# NXDOMAIN, once someone serves its socket again.
q = struct.pack(">HHHHHH", 0x5151, 0x0100, 1, 0, 0, 0) + b"\x06denied\x07example\x00\x00\x01\x00\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(60)
s.sendto(q, ("10.255.255.53", 53))
open(d + "/rp.asked", "w").write("1\n")
a = s.recv(512)
rcode = a[3] & 15 if a[:2] == b"\x51\x51" else -1
open(d + "/rp.answer", "w").write("rcode %d\n" % rcode)
sys.exit(7)
' "$d"
SH
)
	via_bg rp -- sh "$script" "$TDIR"
	cpid=$CPID
	wait_for_file "$TDIR/rp.started" 20 || fail "COMMAND never started: $(cat "$TDIR/rp.out")"
	egretd_kill_all
	port=$(sed -n 's/^dns_port=//p' $(our_records))
	[ -n "$port" ] || fail "control: no DNS port in the record: $(cat $(our_records))"
	echo "$port" >"$TDIR/rp.down.new"
	mv "$TDIR/rp.down.new" "$TDIR/rp.down"
	wait_for_file "$TDIR/rp.asked" 20 || fail "COMMAND never asked: $(cat "$TDIR/rp.out")"
	assert_eq "errno 98 errno 98" "$(cat "$TDIR/rp.bind")" \
		"COMMAND's binds of the proxy's port (UDP, TCP) while egretd is down"
	# Anyone's ephemeral bind, with the port the only one left to take.
	range=$("${WORLD_IN_CLIENT[@]}" cat /proc/sys/net/ipv4/ip_local_port_range)
	"${WORLD_IN_CLIENT[@]}" sh -c 'echo "$1 $1" >/proc/sys/net/ipv4/ip_local_port_range' sh "$port"
	got=$("${WORLD_IN_CLIENT[@]}" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.connect(("127.0.0.1", 53)); print("took %d" % s.getsockname()[1])
except OSError as e:
    print("errno %d" % e.errno)' 2>&1)
	"${WORLD_IN_CLIENT[@]}" sh -c 'echo "$1" >/proc/sys/net/ipv4/ip_local_port_range' sh "$range"
	assert_eq "errno 11" "$got" "an ephemeral bind with only the proxy's port free, while egretd is down"
	egretd_start
	reap "$cpid" 60
	assert_eq 7 "$REAPED" "the caller's status after the re-adoption $(cat "$TDIR/rp.out")"
	assert_eq "rcode 3" "$(cat "$TDIR/rp.answer" 2>/dev/null)" \
		"the answer to the query sent while egretd was down"
	egretd_stop
}

# The miner's way: Node's child_process.spawn of `egret run --repo R --
# AGENT` (tools/deploy/node/egret-spawn.js), as the unprivileged caller:
# piped stdio and the exit code, a kill from Node reaching the attempt,
# a repository the caller may not select refused with one line.
t_egretd_node_miner() {
	local src out
	src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tools/deploy/node"
	egretd_start
	mkdir -m 755 "$TDIR/node"
	cp "$src/egret-spawn.js" "$src/miner-check.js" "$TDIR/node/"
	out=$(timeout -k 5 90 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		node "$TDIR/node/miner-check.js" "$EGRET" "$EGRETD_SOCK" "$TDIR" 2>&1)
	assert_contains "piped-code: 7" "$out" "the agent's exit code, as Node saw it"
	assert_contains "piped-stdin: ok" "$out" "Node's write to the agent's stdin"
	assert_contains "piped-out: in:hello" "$out" "what Node wrote to the agent's stdin, read back"
	assert_contains "piped-err: to-err" "$out" "the agent's stderr, piped to Node"
	assert_contains "killed-code: 9" "$out" "the status of an agent Node killed"
	assert_contains "killed-trap: got-term" "$out" "the agent's trap for Node's SIGTERM"
	assert_contains "foreign-code: 125" "$out" "a repository the miner may not select"
	assert_contains "foreign-said: callers.repos" "$out" "why it was refused"
	egretd_stop
}

# unix_listening PATH: a socket bound at PATH listens, in the client's
# network namespace (where /proc/net/unix lists it).
unix_listening() {
	world_exec_client awk -v p="$1" '$8 == p && $4 == "00010000" { f = 1 } END { exit !f }' /proc/net/unix
}

# egretd.socket's way, by hand (no systemd runs as PID 1 here): a socket
# activator holds the socket (0660 root:GROUP, as SocketMode/SocketGroup
# make it) and starts egretd on the first connection, passing the socket
# (LISTEN_FDS). egretd serves on that socket, never binding its own: the
# socket file stays the activator's inode.
t_egretd_socket_activation() {
	local ino
	command -v systemd-socket-activate >/dev/null || fail "systemd-socket-activate missing (package systemd)"
	egretd_config
	rm -f "$EGRETD_SOCK"
	"${WORLD_IN_CLIENT[@]}" systemd-socket-activate --seqpacket -l "$EGRETD_SOCK" \
		"$(dirname "$EGRET")/egretd" --config "$EGRETD_CONF" >"$TDIR/egretd.log" 2>&1 &
	EGRETD_PID=$!
	# Listening, not just bound (a connection would start egretd, which
	# the control below says no caller did yet): the socket's flags in the
	# namespace's /proc/net/unix (__SO_ACCEPTCON, 00010000).
	wait_until 30 unix_listening "$EGRETD_SOCK" ||
		fail "the activator did not listen: $(cat "$TDIR/egretd.log")"
	chgrp "$TEST_GID" "$EGRETD_SOCK" && chmod 660 "$EGRETD_SOCK"
	ino=$(stat -c %i "$EGRETD_SOCK")
	[ "$(cat /proc/"$EGRETD_PID"/comm)" != egretd ] ||
		fail "control: egretd runs before any caller connected"
	via -- sh -c 'echo first'
	assert_eq 0 "$RC" "the first caller, which starts egretd $(said)"
	assert_eq first "$OUT" "what COMMAND printed through the activated egretd"
	assert_eq egretd "$(cat /proc/"$EGRETD_PID"/comm)" "the activator's process, once a caller connected"
	via -- sh -c 'echo second'
	assert_eq second "$OUT" "a second caller, served by the same egretd $(said)"
	assert_eq "$ino" "$(stat -c %i "$EGRETD_SOCK")" "the socket's inode (egretd took the activator's)"
	egretd_stop
}

# Fleets: a denial that becomes a request is also a JSON line on egretd's
# stdout (not the caller's), and `egret requests import` folds collected
# lines into another store, where it is pending for review; a broken
# request line refuses its file, naming FILE:LINE.
t_egretd_requests_json() {
	local fleet="$TDIR/fleet" tok line out
	tok=$(token req)
	egretd_config
	"${WORLD_IN_CLIENT[@]}" "$(dirname "$EGRET")/egretd" --config "$EGRETD_CONF" \
		>"$TDIR/egretd.out" 2>"$TDIR/egretd.log" &
	EGRETD_PID=$!
	egretd_wait_ready
	via --repo octo/app -- "$P" tcp 203.0.113.11 80 "$tok"
	assert_eq "$REFUSED" "$OUT" "the denied flow $(said)"
	! grep -q '"egret":"request"' "$TDIR/out" "$TDIR/err" ||
		fail "a request line reached the caller's stdio"
	wait_until 20 grep -q '"target":"203.0.113.11"' "$TDIR/egretd.out" ||
		fail "no request line on egretd's stdout: $(cat "$TDIR/egretd.out" "$TDIR/egretd.log" "$TDIR/err")"
	line=$(grep '"egret":"request"' "$TDIR/egretd.out" | head -n 1)
	assert_contains '"repo":"octo/app"' "$line" "the request line's repository"
	assert_contains '"port":80' "$line" "the request line's port"
	assert_contains '"new_attempt":true' "$line" "the attempt's first line for it"
	# No node: configured: the host's name (here egretd's own UTS is the host's).
	assert_contains "\"node\":\"$(uname -n)\"" "$line" "the request line's node"
	out=$("$EGRET" requests import --state-dir "$fleet" "$TDIR/egretd.out" 2>&1)
	assert_contains "1 request lines taken" "$out" "import's count"
	out=$("$EGRET" requests list --state-dir "$fleet" --json 2>&1)
	assert_contains '"target":"203.0.113.11"' "$out" "the imported request, pending in the fleet's store"
	{ echo "prefix $line" | sed 's/"port":80/"prt":80/'; } >"$TDIR/broken.log"
	out=$("$EGRET" requests import --state-dir "$TDIR/fleet2" "$TDIR/broken.log" 2>&1)
	RC=$?
	assert_eq 1 "$RC" "import of a broken request line"
	assert_contains "broken.log:1: unknown key 'prt'" "$out" "import's one line"
	egretd_stop

	# A node: of its own: every line names it, whatever the hostname.
	egretd_config "" "node: fleet-node-7"
	"${WORLD_IN_CLIENT[@]}" "$(dirname "$EGRET")/egretd" --config "$EGRETD_CONF" \
		>"$TDIR/egretd2.out" 2>"$TDIR/egretd2.log" &
	EGRETD_PID=$!
	egretd_wait_ready
	via --repo octo/app -- "$P" tcp 203.0.113.11 80 "$tok-2"
	wait_until 20 grep -q '"node":"fleet-node-7"' "$TDIR/egretd2.out" ||
		fail "no request line naming node fleet-node-7: $(cat "$TDIR/egretd2.out" "$TDIR/egretd2.log")"
	egretd_stop
}

# A restarted egretd that cannot take an attempt back (here: the options
# it kept no longer parse) removes it at once, COMMAND with it, rather
# than leave it unserved for scan after scan; its client, back, gets 125.
t_egretd_readopt_refused() {
	local script cpid beat f
	egretd_start
	script=$(write_script rr.sh <<'SH'
touch "$1/rr.started"
while :; do date +%s%N >"$1/rr.beat"; sleep 0.1; done
SH
)
	via_bg rr -- sh "$script" "$TDIR"
	cpid=$CPID
	wait_for_file "$TDIR/rr.started" 20 || fail "COMMAND never started: $(cat "$TDIR/rr.out")"
	egretd_kill_all
	f=$(our_records)
	[ -n "$f" ] || fail "no record of the attempt in $STATE_ROOT"
	printf 'run\0--no-such-option\0--\0true\0' >"/run/egretd-attempts/$(basename "$f").argv"
	egretd_start
	reap "$cpid" 60
	assert_eq 125 "$REAPED" "the client of an attempt egretd could not take back $(cat "$TDIR/rr.out")"
	assert_contains "cannot be re-adopted" "$(cat "$TDIR/egretd.log")" "egretd's word on it"
	wait_until 10 no_records || fail "records left: $(our_records)"
	beat=$(cat "$TDIR/rr.beat")
	sleep 0.5
	assert_eq "$beat" "$(cat "$TDIR/rr.beat")" "COMMAND's heartbeat after the attempt was removed"
	egretd_stop
}
