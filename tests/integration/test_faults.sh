# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016 # `A && B || fail` is meant (fail exits); $1 in single quotes is the inner shell's
# test_faults.sh - egretd under faults (issue 25): a fast COMMAND's status
# under load, the whole unit killed with attempts live or in set-up, /run
# full, a second egretd and a second build on the host, a flood of idle
# connections. Each leaves nothing behind: no record, cgroup, pin, file,
# uid lock or process of its own. Sourced by run.sh after test_egretd.sh,
# whose helpers it uses.

# The attempts' uids of these tests, and what a test may leave of them.
FAULT_UIDS_FIRST=$(own_uid 100)
FAULT_UIDS_LAST=$(own_uid 199)

# Nothing of the test's egretd is left: records, egretd's files of them,
# their cgroups under the suite's, pins, processes of the attempt uids,
# the attempt uids' lock files. $1: the attempt ids seen (for the files).
assert_nothing_left() {
	local id pid u
	wait_until 15 no_records || fail "records left: $(our_records)"
	for id in $1; do
		assert_eq "" "$(ls /run/egretd-attempts/"$id".* 2>/dev/null)" "egretd's files of $id"
		assert_absent "$PIN_ROOT/$id" "pins of $id"
		[ -z "$(find "$SUITE_CG" -mindepth 1 -maxdepth 2 -type d -name "$id" 2>/dev/null)" ] ||
			fail "the cgroup of $id is left under $SUITE_CG"
	done
	# (A zombie runs nothing: this VM's pid 1 may never reap orphans.)
	for pid in $(ps -e -o pid=,uid=,stat= | awk -v a="$FAULT_UIDS_FIRST" -v b="$FAULT_UIDS_LAST" \
			'$2 >= a && $2 <= b && $3 !~ /^Z/ { print $1 }'); do
		fail "a process of an attempt uid is left: $(ps -o pid=,uid=,args= -p "$pid")"
	done
	for ((u = FAULT_UIDS_FIRST; u <= FAULT_UIDS_LAST; u++)); do
		[ ! -e "/run/egret-uids/uid-$u" ] || fail "the lock file of uid $u is left"
	done
}

# The ids of our egretd's records now.
our_ids() {
	local f
	for f in $(our_records); do basename "$f"; done
}

# files_at_least N GLOB: N files match GLOB (in TDIR) now.
files_at_least() {
	[ "$(find "$TDIR" -maxdepth 1 -name "$2" | wc -l)" -ge "$1" ]
}

# A record's lock is free: nobody serves the attempt.
unserved() {
	flock -n -s "$1" true
}

# 100 attempts one after another beside two busy loops take a minute
# here: more than the runner's 120 s backstop on a slower machine.
TEST_SLOW[t_fault_fast_commands]=300

# 100 COMMANDs that end at once, one after another, beside two busy
# loops: each status is COMMAND's (0 or 7), never egret's 125. The
# keeper's race (unit test test_keeper) made 12-50 % of them 125.
# FAST_ATTEMPTS and FAST_ONLY_TRUE=1 (every COMMAND `true`): `make stress`.
t_fault_fast_commands() {
	local i want bad=0 b1 b2 n=${FAST_ATTEMPTS:-100} t0=$SECONDS me=$BASHPID
	egretd_start
	# Busy while this test lives: the runner's watchdog kills only the
	# test's own shell, and two loops left spinning slowed every suite
	# after them.
	(while kill -0 "$me" 2>/dev/null; do :; done) &
	b1=$!
	(while kill -0 "$me" 2>/dev/null; do :; done) &
	b2=$!
	for ((i = 0; i < n; i++)); do
		if ((i % 2)) && [ -z "${FAST_ONLY_TRUE:-}" ]; then
			via -- sh -c 'exit 7'
			want=7
		else
			via -- true
			want=0
		fi
		[ "$RC" = "$want" ] || { bad=$((bad + 1)); note "attempt $i: $(said)"; }
	done
	kill "$b1" "$b2"
	wait "$b1" "$b2" 2>/dev/null
	note "$n attempts in $((SECONDS - t0)) s: $((n - bad)) with COMMAND's status, $bad without"
	assert_eq 0 "$bad" "attempts of $n whose status was not COMMAND's"
	egretd_stop
	assert_nothing_left ""
}

# egretd's unit killed (every process of it) with 30 attempts live: each
# is re-adopted by the next egretd, each caller gets its own COMMAND's
# status, and then nothing is left.
t_fault_unit_killed_30() {
	local i pids=() ids EGRETD_VERBOSE=1
	egretd_start "  - user: $TEST_USER
    max: 40" "  max: 40"
	for ((i = 1; i <= 30; i++)); do
		via_bg "u30.$i" -- sh -c \
			'touch "$1/u30.started.$2"; while [ ! -e "$1/u30.go" ]; do sleep 0.1; done; exit $2' \
			sh "$TDIR" "$i"
		pids+=("$CPID")
	done
	wait_until 60 files_at_least 30 'u30.started.*' ||
		fail "not all 30 COMMANDs started: $(find "$TDIR" -name 'u30.started.*' | wc -l) $(cat "$TDIR/egretd.log")"
	ids=$(our_ids)
	assert_eq 30 "$(echo "$ids" | wc -w)" "records of the 30 live attempts"
	egretd_kill_all
	egretd_start "  - user: $TEST_USER
    max: 40" "  max: 40"
	touch "$TDIR/u30.go"
	for ((i = 1; i <= 30; i++)); do
		reap "${pids[$((i - 1))]}" 90
		[ "$REAPED" = "$i" ] || note "egretd's log: $(cat "$TDIR/egretd.log")"
		assert_eq "$i" "$REAPED" "caller $i's status after the unit was killed $(cat "$TDIR/u30.$i.out")"
	done
	egretd_stop
	assert_nothing_left "$ids"
}

# egretd's unit killed while 50 attempts are being set up: the 50 callers
# wait for one signal to connect at once, and the first record is the
# signal to stop the unit where it is (cgroup.freeze), so the others are
# in set-up or waiting to be accepted. A 51st caller then connects to the
# frozen egretd, which cannot accept it: one caller, at least, is cut
# short whatever the scheduling did, and the unit is killed. Those that
# had started get their status through the next egretd; those cut short
# get 125 and one line; the next egretd removes what the cut ones left at
# its start, with no gc run by anyone.
t_fault_setup_killed_50() {
	local i pids=() n3=0 cut=0 refused=0 out killer
	egretd_start "  - user: $TEST_USER
    max: 60" "  max: 60"
	(
		t0=$SECONDS
		while [ -z "$(our_records)" ] && [ $((SECONDS - t0)) -lt 60 ]; do :; done
		echo 1 >"$EGRETD_UNIT/cgroup.freeze"
	) &
	killer=$!
	for ((i = 1; i <= 51; i++)); do
		timeout -k 5 120 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" sh -c \
			'cd "$1" && shift && while [ ! -e "s50.go.$1" ]; do sleep 0.01; done && shift && exec "$@"' \
			sh "$TDIR" "$((i / 51))" "$EGRET" run --via "$EGRETD_SOCK" -- \
			sh -c 'touch "$1/s50.started.$2"; sleep 2; exit 3' sh "$TDIR" "$i" \
			>"$TDIR/s50.$i.out" 2>&1 &
		pids+=($!)
	done
	touch "$TDIR/s50.go.0"
	wait "$killer"
	wait_until 30 grep -qx 'frozen 1' "$EGRETD_UNIT/cgroup.events" ||
		fail "egretd's unit never froze: $(cat "$EGRETD_UNIT/cgroup.events")"
	touch "$TDIR/s50.go.1"
	wait_until 30 accept_queued ||
		fail "control: the 51st caller's connection never waited in egretd's queue"
	echo 1 >"$EGRETD_UNIT/cgroup.kill"
	wait "$EGRETD_PID" 2>/dev/null
	wait_until 10 rmdir "$EGRETD_UNIT" 2>/dev/null || fail "egretd's killed unit is not empty"
	egretd_start "  - user: $TEST_USER
    max: 60" "  max: 60"
	for ((i = 1; i <= 51; i++)); do
		reap "${pids[$((i - 1))]}" 90
		out=$(cat "$TDIR/s50.$i.out")
		case $REAPED:$out in
		3:*) n3=$((n3 + 1)) ;;
		125:*"egretd closed the connection before the attempt ended"*) cut=$((cut + 1)) ;;
		125:*"egretd closed the connection before it read the request"*) cut=$((cut + 1)) ;;
		125:*"connect to egretd"*) refused=$((refused + 1)) ;;	# not accepted before the kill
		*) fail "caller $i: status $REAPED ($out)" ;;
		esac
	done
	note "$n3 attempts ran through to their status, $cut were cut short in set-up, $refused found no egretd"
	[ "$cut" -gt 0 ] || fail "control: no attempt was in set-up when the unit was killed"
	egretd_stop
	assert_nothing_left ""
	[ -z "$(find "$SUITE_CG" -mindepth 1 -maxdepth 1 -type d ! -name egret)" ] ||
		fail "attempt cgroups left under $SUITE_CG: $(find "$SUITE_CG" -mindepth 1 -maxdepth 1 -type d)"
}

# A connection waits in egretd's listening socket's queue, not accepted.
accept_queued() {
	[ "$(world_exec_client ss -xlnH | awk -v p="$EGRETD_SOCK" '$5 == p { print $3 }')" -gt 0 ] 2>/dev/null
}

# /run full (here egretd's own files: a small tmpfs on /run/egretd-attempts
# in egretd's mount namespace, filled while COMMAND runs): COMMAND's 0 is
# the caller's 0, never 125. Full from the start, an attempt is refused
# with one line: it could not tell its status to a restarted egretd.
t_fault_run_full() {
	local cpid m="$TDIR/marker"
	local EGRETD_NS=("${WORLD_IN_CLIENT[@]}" unshare --mount sh -c \
		'mount -t tmpfs -o size=64k,mode=700 tmpfs /run/egretd-attempts && exec "$@"' sh)
	mkdir -p /run/egretd-attempts
	egretd_start
	via_bg full -- sh -c 'touch "$1/full.started"; while [ ! -e "$1/full.go" ]; do sleep 0.1; done' \
		sh "$TDIR"
	cpid=$CPID
	wait_for_file "$TDIR/full.started" 20
	nsenter -t "$EGRETD_PID" -m sh -c 'cat /dev/zero >/run/egretd-attempts/filler' 2>/dev/null
	[ "$(nsenter -t "$EGRETD_PID" -m df --output=avail /run/egretd-attempts | tail -n 1 | tr -d ' ')" = 0 ] ||
		fail "control: egretd's /run/egretd-attempts is not full"
	touch "$TDIR/full.go"
	reap "$cpid" 30
	assert_eq 0 "$REAPED" "COMMAND's status with /run full $(cat "$TDIR/full.out")"
	# Full again (the attempt's removal freed its files' blocks).
	nsenter -t "$EGRETD_PID" -m sh -c 'cat /dev/zero >>/run/egretd-attempts/filler' 2>/dev/null
	via -- sh -c 'touch "$1"' sh "$m"
	assert_eq 125 "$RC" "an attempt with /run full $(said)"
	assert_absent "$m" "the COMMAND of an attempt refused with /run full"
	assert_contains "reserve room for COMMAND's status" "$ERR" "why it was refused"
	egretd_stop
	assert_nothing_left ""
}

# Two egretds on one host. A second egretd of A's socket is refused (it
# would take the socket's name). With A's unit killed, B never takes A's
# attempt, and `egret gc` leaves it (marked) while A is away for less
# than the grace period; A, back, re-adopts it and its caller gets its
# status. An attempt whose egretd stays away past the grace period is
# removed by gc, COMMAND with it.
t_fault_second_egretd() {
	local a_sock a_dir=/run/egretd-test-$$ b_dir=/run/egretd-testb-$$ cpid rec b_pid b_unit
	egretd_start
	a_sock=$EGRETD_SOCK
	via_bg a1 -- sh -c 'echo $$ >"$1/a1.pid"; while [ ! -e "$1/a1.go" ]; do sleep 0.1; done; exit 5' \
		sh "$TDIR"
	cpid=$CPID
	wait_for_file "$TDIR/a1.pid" 20
	rec=$(our_records)
	[ -n "$rec" ] || fail "no record of A's attempt"

	"${WORLD_IN_CLIENT[@]}" "$(dirname "$EGRET")/egretd" --config "$EGRETD_CONF" >"$TDIR/dup.log" 2>&1
	assert_eq 125 "$?" "a second egretd of A's socket"
	assert_contains "another egretd serves $a_sock" "$(cat "$TDIR/dup.log")" "its one line"
	via -- sh -c 'echo still-a'
	assert_eq still-a "$OUT" "A, after the second egretd of its socket was refused $(said)"

	egretd_kill_all
	EGRETD_DIR=$b_dir EGRETD_UID_RANGE=$(own_uid 150)-$(own_uid 199) egretd_start
	b_pid=$EGRETD_PID b_unit=$EGRETD_UNIT
	via -- sh -c 'echo from-b'
	assert_eq from-b "$OUT" "an attempt through B $(said)"
	assert_exists "$rec" "A's record, with B running"
	unserved "$rec" || fail "B took A's attempt: $(cat "$rec")"
	alive "$(cat "$TDIR/a1.pid")" || fail "A's COMMAND died with B running"

	"$EGRET" gc --under "$SUITE_CG" >"$TDIR/gc.out" 2>&1 || fail "egret gc: $(cat "$TDIR/gc.out")"
	assert_exists "$rec" "A's record after a gc within the grace period"
	grep -q '^unserved=[1-9]' "$rec" || fail "gc did not mark A's unserved attempt: $(cat "$rec")"
	alive "$(cat "$TDIR/a1.pid")" || fail "gc killed A's COMMAND within the grace period"

	EGRETD_DIR=$a_dir egretd_start
	touch "$TDIR/a1.go"
	reap "$cpid" 90
	assert_eq 5 "$REAPED" "A's caller, after A came back $(cat "$TDIR/a1.out")"

	# Away for good: a gc marks it, and one after the grace period (the
	# mark moved back by hand) removes it.
	via_bg a2 -- sh -c 'echo $$ >"$1/a2.pid"; exec sleep 600' sh "$TDIR"
	cpid=$CPID
	wait_for_file "$TDIR/a2.pid" 20
	rec=$(our_records)
	egretd_kill_all
	"$EGRET" gc --under "$SUITE_CG" >"$TDIR/gc.out" 2>&1 || fail "egret gc: $(cat "$TDIR/gc.out")"
	assert_exists "$rec" "A's second record after the first gc"
	sed -i "s/^unserved=.*/unserved=$(($(date +%s) - 301))/" "$rec"
	"$EGRET" gc --under "$SUITE_CG" >"$TDIR/gc.out" 2>&1 || fail "egret gc: $(cat "$TDIR/gc.out")"
	assert_absent "$rec" "A's record, its egretd gone for longer than the grace period"
	wait_until 5 not_alive "$(cat "$TDIR/a2.pid")" || fail "gc left the COMMAND of a removed attempt"
	kill -KILL "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null

	EGRETD_PID=$b_pid EGRETD_UNIT=$b_unit EGRETD_SOCK=$b_dir/egret.sock egretd_stop
	rm -rf "$a_dir"
	assert_nothing_left ""
}

# A second build on the host. The same sources built in another directory
# give the same objects (so the same set's tag); another build's `egret
# run` loads its own set and never removes egretd's, whose programs stay
# the very same; `egret gc --programs` then removes the set nobody uses
# and keeps egretd's.
# It builds egret's objects twice and egret once: under `make stress`, on
# two busy cores, that alone took over 120 s (run 17 of 20 timed out
# there, in the builds, with nothing wrong).
TEST_SLOW[t_fault_second_build]=600
t_fault_second_build() {
	local src top set prog tag alt alt_tag
	# The sources these tests belong to (egret may be built elsewhere:
	# build/sanitize/ under make sanitize).
	top=$(cd "$HERE/../.." && pwd)
	src="$TDIR/src"
	mkdir -p "$src/tests/bpf"
	cp -r "$top/Makefile" "$top/bpf" "$top/include" "$top/vmlinux" "$src/"
	cp "$top/tests/bpf/bpf.mk" "$src/tests/bpf/"
	make -s -C "$src" OUT=out out/egret.bpf.o out/unix.bpf.o out/tasks.bpf.o >"$TDIR/make.log" 2>&1 ||
		fail "build in $src: $(cat "$TDIR/make.log")"
	for o in egret unix tasks; do
		cmp -s "$src/out/$o.bpf.o" "$(dirname "$EGRET")/$o.bpf.o" ||
			fail "the same sources built in $src gave another $o.bpf.o (the tag would differ)"
	done

	alt="$TDIR/alt"
	make -s -C "$top" -j2 OUT="$alt" VERSION="alt-$$" "$alt/egret" >"$TDIR/make.log" 2>&1 ||
		fail "the second build: $(tail -n 20 "$TDIR/make.log")"
	tag=$("$EGRET" version | sed -n 's/.*(programs \([0-9a-f]*\)).*/\1/p')
	alt_tag=$("$alt/egret" version | sed -n 's/.*(programs \([0-9a-f]*\)).*/\1/p')
	[ -n "$tag" ] && [ -n "$alt_tag" ] && [ "$tag" != "$alt_tag" ] ||
		fail "control: the two builds' tags: '$tag' '$alt_tag'"

	egretd_start
	set=/sys/fs/bpf/egret-programs/$tag
	via -- true
	assert_eq 0 "$RC" "an attempt through egretd $(said)"
	prog=$(bpftool -j prog show pinned "$set/prog_egret_connect4" | jq -r '.id')
	[ -n "$prog" ] && [ "$prog" != null ] || fail "egretd's set has no connect4 in $set"
	timeout 60 "${WORLD_IN_CLIENT[@]}" "$alt/egret" run -v --policy none --user "$TEST_USER" -- true \
		>"$TDIR/alt.out" 2>&1
	assert_eq 0 "$?" "the second build's egret run $(cat "$TDIR/alt.out")"
	assert_contains "loaded now" "$(cat "$TDIR/alt.out")" "the second build's programs"
	assert_exists "$set" "egretd's set after the second build's egret run"
	via -- true
	assert_eq 0 "$RC" "egretd's next attempt $(said)"
	assert_eq "$prog" "$(bpftool -j prog show pinned "$set/prog_egret_connect4" | jq -r '.id')" \
		"egretd's connect4 after the second build's run (a reload would change it)"
	"$EGRET" gc --programs --under "$SUITE_CG" >"$TDIR/gc.out" 2>&1 ||
		fail "egret gc --programs: $(cat "$TDIR/gc.out")"
	assert_absent "/sys/fs/bpf/egret-programs/$alt_tag" "the second build's set, which nobody uses, after gc --programs"
	assert_exists "$set" "egretd's set after gc --programs"
	egretd_stop
	assert_nothing_left ""
}

# hold_idle N NAME: N connections to egretd as the caller that send
# nothing and, at once beside them, a request (`egret run --via ... -- sh
# -c 'echo ran'`): its status, stdout and stderr in TDIR/NAME.rc, .out,
# .err. The request starts right after the last connect, well inside the
# 5 s an idle connection's process waits for its request
# (user/daemon/handle.c, REQUEST_TIMEOUT_S). TDIR/NAME.early: how many
# idle connections had been answered "no request" by the time the request
# ended (0 unless the request came too late to be beside them). Then each
# connection's first answer, however long it takes (bounded):
# TDIR/NAME.refused counts the "too many connections" lines among them,
# TDIR/NAME.unanswered those that had none after 30 s.
hold_idle() {
	timeout -k 5 120 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" /usr/bin/python3 -c '
import socket, subprocess, sys, time
sock, n, egret, d, name = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
conns = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)
    conns.append(s)
with open("%s/%s.out" % (d, name), "w") as o, open("%s/%s.err" % (d, name), "w") as e:
    rc = subprocess.call([egret, "run", "--via", sock, "--", "sh", "-c", "echo ran"], cwd=d,
                         stdin=subprocess.DEVNULL, stdout=o, stderr=e, timeout=60)
open("%s/%s.rc" % (d, name), "w").write("%d\n" % rc)
first = [None] * n
for s in conns:
    s.setblocking(False)
def poll():
    for i, s in enumerate(conns):
        if first[i] is None:
            try:
                first[i] = s.recv(4096)
            except BlockingIOError:
                pass
poll()
early = sum(1 for m in first if m is not None and b"no request" in m)
deadline = time.monotonic() + 30
while None in first and time.monotonic() < deadline:
    time.sleep(0.1)
    poll()
refused = sum(1 for m in first if m is not None and b"too many connections" in m)
open("%s/%s.early" % (d, name), "w").write("%d\n" % early)
open("%s/%s.unanswered" % (d, name), "w").write("%d\n" % first.count(None))
open("%s/%s.refused" % (d, name), "w").write("%d\n" % refused)
' "$EGRETD_SOCK" "$1" "$EGRET" "$TDIR" "$2" || fail "the holder of $1 idle connections failed"
	RC=$(cat "$TDIR/$2.rc") OUT=$(cat "$TDIR/$2.out") ERR=$(cat "$TDIR/$2.err")
	assert_eq 0 "$(cat "$TDIR/$2.early")" \
		"control: idle connections that timed out before the request beside them ended"
	assert_eq 0 "$(cat "$TDIR/$2.unanswered")" "idle connections egretd never answered"
}

# A request as the caller runs COMMAND (a function: wait_until runs it
# again and again).
via_runs() {
	via -- true
	[ "$RC" = 0 ]
}

# egretd has no process of a connection left (nor a zombie to reap).
egretd_no_workers() {
	[ -z "$(pgrep -P "$EGRETD_PID")" ]
}

# A caller's idle connections hold no attempt's slot: with callers.max 1
# and 10 connections open that sent nothing, its request runs. Past 33 (its
# max and 32) waiting connections of one uid, egretd answers each new one
# with a refusal line at once (never a bare close, never EPIPE), and a
# request then is refused with that line; once they go, requests run again.
t_fault_idle_connections() {
	egretd_start "  - user: $TEST_USER
    max: 1"
	hold_idle 10 idle10
	assert_eq 0 "$(cat "$TDIR/idle10.refused")" "refusals among 10 idle connections"
	assert_eq ran "$OUT" "a request beside 10 idle connections, callers.max 1 $(said)"
	# The 10 connections' processes gone: none counts among the 40's.
	wait_until 30 egretd_no_workers ||
		fail "egretd's processes of the 10 idle connections stay: $(pgrep -a -P "$EGRETD_PID")"

	hold_idle 40 idle40
	assert_eq 125 "$RC" "a request while 33 connections of its uid wait $(said)"
	assert_contains "too many connections of uid $TEST_UID wait" "$ERR" "its one line"
	assert_eq 1 "$(wc -l <"$TDIR/idle40.err")" "lines on the caller's stderr"
	assert_eq 7 "$(cat "$TDIR/idle40.refused")" "refusals among 40 idle connections of one uid (callers.max 1 + 32 may wait)"
	wait_until 20 via_runs ||
		fail "requests after the idle connections went: $(said) $(tail -n 5 "$TDIR/egretd.log")"
	egretd_stop
	assert_nothing_left ""
}

# A root egret run whose record cannot be written (/run/egret full, in a
# mount namespace of the test's own): one line that says so, and not a
# missing privilege it does not lack.
t_fault_record_full() {
	local m="$TDIR/marker"
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" unshare --mount sh -c '
		mount -t tmpfs -o size=8k,mode=700 tmpfs /run/egret || exit 99
		cat /dev/zero >/run/egret/.filler 2>/dev/null
		exec "$@"' sh "$EGRET" run --policy none --user "$TEST_USER" -- sh -c 'touch "$1"' sh "$m" \
		>"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_refused "an attempt whose record cannot be written" "$m"
	assert_contains "create record in /run/egret: No space left on device" "$ERR" "the line"
	[[ $ERR != *"needs root"* ]] || fail "a full /run called a missing privilege: $ERR"
}

# egretd in a cgroup that once received cgroup.kill (a supervisor that
# reuses its unit's cgroup): this kernel kills every child it starts into
# an attempt's cgroup as it is born. The caller gets 125 and the one line
# that says what happened and what to do, COMMAND never ran, nothing is
# left. (A kernel without the fault runs COMMAND: the line is not needed.)
t_fault_reused_cgroup() {
	local m="$TDIR/marker"
	EGRETD_UNIT_KILLED=1 egretd_start
	via -- sh -c 'touch "$1"' sh "$m"
	if [ "$RC" = 0 ] && [ -e "$m" ]; then
		note "this kernel does not kill children of a killed cgroup at birth"
	else
		assert_eq 125 "$RC" "an attempt from egretd in a reused cgroup $(said)"
		assert_absent "$m" "COMMAND of an attempt whose keeper was killed at birth"
		assert_contains "was killed as it was born into cgroup" "$ERR" "the line"
		assert_contains "DEPLOYMENT.md" "$ERR" "where the line points"
	fi
	egretd_stop
	assert_nothing_left ""
}

# Someone holds the lock of record $1 (an exclusive one cannot be had).
record_locked() {
	! flock -n -x "$1" true
}

# A process of egretd's sleeps in poll(): while the test holds the
# record's lock, only a re-adopter between its tries for it does
# (daemon/adopt.c: take_attempt is its first step; no caller connects).
readopter_waits() {
	local pid
	for pid in $(pgrep -P "$EGRETD_PID"); do
		case $(cat "/proc/$pid/wchan" 2>/dev/null) in *poll*) return 0 ;; esac
	done
	return 1
}

# A record's lock held for an instant when a restarted egretd goes to
# re-adopt the attempt (another egret's gc reads it that way): the
# re-adopter waits its turn rather than leave the attempt to nobody, and
# the caller gets COMMAND's status. (Found under stress-ng: run 17 of 20.)
t_fault_readopt_lock_held() {
	local cpid rec holder
	egretd_start
	via_bg lh -- sh -c 'touch "$1/lh.started"; while [ ! -e "$1/lh.go" ]; do sleep 0.1; done; exit 6' \
		sh "$TDIR"
	cpid=$CPID
	wait_for_file "$TDIR/lh.started" 20
	rec=$(our_records)
	[ -n "$rec" ] || fail "no record of the attempt"
	egretd_kill_all
	# The record's lock, shared as a gc takes it, held by a process of the
	# test's until the test lets go (not in this shell: egretd, started
	# below, would inherit the fd and hold the lock for good).
	flock -s "$rec" sh -c 'while [ ! -e "$1" ]; do sleep 0.05; done' sh "$TDIR/lock.go" &
	holder=$!
	wait_until 20 record_locked "$rec" || fail "control: the record's lock was never taken"
	egretd_start
	# Let go once egretd's re-adopter is seen waiting for the lock (its
	# tries, 50 ms apart, span a second; if it gave up first, the next
	# scan, 10 s on, takes the attempt).
	wait_until 30 readopter_waits ||
		fail "control: egretd's re-adopter never waited for the record's lock: $(tail -n 5 "$TDIR/egretd.log")"
	touch "$TDIR/lock.go"
	reap "$holder" 10
	touch "$TDIR/lh.go"
	reap "$cpid" 60
	assert_eq 6 "$REAPED" "the caller's status when the record was locked at re-adoption $(cat "$TDIR/lh.out")"
	egretd_stop
	assert_nothing_left ""
}
