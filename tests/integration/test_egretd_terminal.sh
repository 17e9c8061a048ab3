# shellcheck shell=bash
# test_egretd_terminal.sh - interactive agents through egretd (issue 29):
# the caller's terminal, used for real under tmux by the unprivileged
# caller: window size changes, Ctrl-Z and fg, a kill of a stopped
# COMMAND, --pty and --pty-size without a terminal, and a pty that lives
# through an egretd restart. Sourced by run.sh after test_egretd.sh and
# tmux.sh, whose helpers it uses.
# SC2016: single-quoted $... belongs to the shell in the pane.
# shellcheck disable=SC2016

# The caller's shell in a tmux pane (tmux_up's, as TEST_USER, in the
# client's network namespace), in TDIR, where its COMMANDs start.
egretd_tmux_up() {
	# shellcheck disable=SC2034 # tmux_up's
	local TMUX_AS=("${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}")
	tmux_up "$1" "$2" || fail "cannot start tmux"
	tmux_line "cd $TDIR"
	tmux_sync || fail "the caller's shell does not answer"
}

# What the pane types to run COMMAND through egretd.
via_line() {
	echo "$EGRET run --via $EGRETD_SOCK $*"
}

# "PID STATE" of the process named COMM that runs as an attempt uid.
attempt_proc() {	# COMM
	ps -e -o pid=,uid=,stat=,comm= | awk -v a="${EGRETD_UIDS%-*}" -v b="${EGRETD_UIDS#*-}" -v c="$1" \
		'$2 >= a && $2 <= b && $4 == c { print $1, substr($3, 1, 1); exit }'
}

attempt_proc_state() {	# COMM STATE
	[ "$(attempt_proc "$1" | awk '{ print $2 }')" = "$2" ]
}

attempt_proc_gone() {	# COMM
	[ -z "$(attempt_proc "$1")" ]
}

# A TUI agent through egretd: COMMAND's pty has the caller's terminal's
# size and follows its changes (the client forwards SIGWINCH; before, the
# agent drew at the start size for ever), and its status is the caller's.
t_egretd_terminal_resize() {
	local line
	egretd_start
	egretd_tmux_up 100 30
	trap tmux_down EXIT
	tmux_line "$(via_line -- sh); echo egret-rc=\$?"
	wait_until 20 attempt_proc_state sh S || fail "COMMAND never started: $(tmux_tail)"
	tmux_line 'echo "tty=$(tty) size=$(stty size) uid=$(id -u)"'
	tmux_wait "tty=/dev/pts/" 20 || fail "no answer from the shell through egretd: $(tmux_tail)"
	line=$(tmux_screen | grep '^tty=/dev/pts/' | tail -n 1)
	[[ $line == "tty=/dev/pts/"*" size=30 100 uid="* ]] ||
		fail "COMMAND's terminal: want a pty of 30x100, got '$line'"
	[[ $line != *" uid=$TEST_UID" ]] || fail "COMMAND runs as the caller: '$line'"
	# The resize travels (client, egretd, pty) while the shell reads the
	# next line: it waits for it (size_wait, tmux.sh).
	tmux -S "$TMUX_SOCK" resize-window -t t -x 120 -y 40
	tmux_line "$(size_wait "40 120") echo \"resized=\$(stty size)\""
	tmux_wait "resized=40 120" 20 || fail "after a resize to 120x40: $(tmux_tail 3)"
	tmux -S "$TMUX_SOCK" resize-window -t t -x 90 -y 25
	tmux_line "$(size_wait "25 90") echo \"again=\$(stty size)\""
	tmux_wait "again=25 90" 20 || fail "after a resize to 90x25: $(tmux_tail 3)"
	tmux_line 'exit 7'
	tmux_wait "egret-rc=7" || fail "the caller's status: $(tmux_tail 3)"
	egretd_stop
}

# Ctrl-Z on a COMMAND that is not a shell, through egretd: COMMAND stops,
# the client stops as the shell's job, the shell has the terminal back
# (before, the client waited and the keys went to the stopped pty); fg
# continues both; Ctrl-C ends it with 130. The operator's terminal
# settings are what they were.
t_egretd_terminal_job_control() {
	egretd_start
	egretd_tmux_up 100 30
	trap tmux_down EXIT
	tmux_line "stty -g >$TDIR/stty.before"
	tmux_line "clear; $(via_line -- sleep 300)"
	wait_until 20 attempt_proc_state sleep S || fail "COMMAND never started: $(tmux_tail)"
	tmux_keys C-z
	tmux_wait "Stopped" || fail "Ctrl-Z: the shell never got the terminal back: $(tmux_tail)"
	wait_until 5 attempt_proc_state sleep T || fail "COMMAND not stopped: $(attempt_proc sleep)"
	tmux_line "stty -g >$TDIR/stty.stopped"
	tmux_sync || fail "the caller's shell does not answer while the job is stopped"
	assert_eq "$(cat "$TDIR/stty.before")" "$(cat "$TDIR/stty.stopped")" \
		"the terminal's settings while the job is stopped"
	tmux_line fg
	wait_until 5 attempt_proc_state sleep S || fail "fg: COMMAND not running again: $(attempt_proc sleep)"
	tmux_keys C-c
	wait_until 5 attempt_proc_gone sleep || fail "Ctrl-C after fg did not end COMMAND"
	tmux_line 'echo "egret-rc=$?"'
	tmux_wait "egret-rc=130" || fail "the caller's status after Ctrl-C: $(tmux_tail 3)"
	tmux_line "stty -g >$TDIR/stty.after"
	tmux_sync
	assert_eq "$(cat "$TDIR/stty.before")" "$(cat "$TDIR/stty.after")" \
		"the operator's terminal settings before and after"
	egretd_stop
}

# A miner's timeout: SIGTERM to the client (child.kill()) while COMMAND
# is stopped (it stopped itself). COMMAND takes it (egret sends SIGCONT
# after, as a shell's kill does): before, it stayed stopped and the
# client waited for ever.
t_egretd_kill_stopped() {
	local cpid
	egretd_start
	via_bg ks -- sh -c 'kill -STOP $$; exec sleep 300'
	cpid=$CPID
	wait_until 20 attempt_proc_state sh T || fail "COMMAND never stopped itself: $(cat "$TDIR/ks.out")"
	kill -TERM "$cpid"
	reap "$cpid" 10
	assert_eq 143 "$REAPED" "the caller's status after SIGTERM to a stopped COMMAND $(cat "$TDIR/ks.out")"
	wait_until 5 attempt_proc_gone sh || fail "COMMAND still there: $(attempt_proc sh)"
	egretd_stop
}

# --pty without a terminal (a miner's pipes): COMMAND has a pty, 80x24 or
# the size --pty-size gives, and reads the caller's stdin through it.
t_egretd_forced_pty() {
	egretd_start
	via --pty -- sh -c 'echo "tty=$(tty) size=$(stty size)"; read -r x; echo "got=$x"; exit 3' <<<hello
	assert_eq 3 "$RC" "--pty through egretd $(said)"
	OUT=$(tr -d '\r' <<<"$OUT")
	grep -q '^tty=/dev/pts/[0-9]* size=24 80$' <<<"$OUT" || fail "--pty: COMMAND's terminal $(said)"
	grep -q '^got=hello$' <<<"$OUT" || fail "--pty: COMMAND did not read the caller's stdin $(said)"
	via --pty-size 132x50 -- sh -c 'echo "tty=$(tty) size=$(stty size)"' </dev/null
	assert_eq 0 "$RC" "--pty-size through egretd $(said)"
	grep -q '^tty=/dev/pts/[0-9]* size=50 132' <<<"$(tr -d '\r' <<<"$OUT")" ||
		fail "--pty-size 132x50: COMMAND's terminal $(said)"
	via --pty-size 0x50 -- true
	assert_eq 125 "$RC" "--pty-size 0x50 $(said)"
	assert_contains "want COLUMNSxROWS" "$ERR" "why --pty-size 0x50 was refused"
	egretd_stop
}

# egretd restarted (its unit killed, as a config roll-out's restart does)
# under an interactive agent: COMMAND's pty lives on (its keeper holds
# the master), the re-adopting egretd relays it to the caller's terminal
# again once the client is back, and the caller gets COMMAND's status.
# Before, the pty died with egretd's process: COMMAND got a hangup, 129.
t_egretd_terminal_restart() {
	egretd_start
	egretd_tmux_up 100 30
	trap tmux_down EXIT
	tmux_line "$(via_line -- sh); echo egret-rc=\$?"
	wait_until 20 attempt_proc_state sh S || fail "COMMAND never started: $(tmux_tail)"
	tmux_line 'echo "before=$((6 * 7))"'
	tmux_wait "before=42" || fail "COMMAND's shell does not answer: $(tmux_tail 3)"
	egretd_kill_all
	egretd_start
	tmux_line 'echo "after=$((6 * 7)) uid=$(id -u)"'
	tmux_wait "after=42 uid=" 30 || fail "COMMAND's shell after egretd's restart: $(tmux_tail 5)"
	# COMMAND's shell answered, not the caller's after COMMAND's end.
	! tmux_screen | grep -q "^egret-rc=[0-9]" || fail "egret ended with egretd's restart: $(tmux_tail 5)"
	[[ $(tmux_screen | grep '^after=42 uid=' | tail -n 1) != "after=42 uid=$TEST_UID" ]] ||
		fail "the caller's shell answered: COMMAND is gone ($(tmux_tail 5))"
	tmux -S "$TMUX_SOCK" resize-window -t t -x 120 -y 40
	tmux_line "$(size_wait "40 120") echo \"resized=\$(stty size)\""
	tmux_wait "resized=40 120" 20 || fail "a resize after egretd's restart: $(tmux_tail 3)"
	tmux_line 'exit 5'
	tmux_wait "egret-rc=5" || fail "the caller's status after egretd's restart: $(tmux_tail 5)"
	egretd_stop
}

# `egret status` as the caller: egretd shows it its own live attempts of
# that egretd, never another caller's; as root, every attempt. Before,
# the caller's status read its own /run/egret (in a container: none) and
# said "no attempts" while its attempts ran.
t_egretd_status_caller() {
	local ca cb ida idb out
	egretd_start "  - user: $TEST_USER
    max: 2
  - uid: $CALLER_B_UID
    max: 2"
	via_bg sa -- sh -c 'touch "$1/sa.started"; sleep 60' sh "$TDIR"
	ca=$CPID
	mkdir -p "$TDIR/b" && chown "$CALLER_B_UID:$TEST_GID" "$TDIR/b"
	timeout -k 5 120 "${WORLD_IN_CLIENT[@]}" "${AS_CALLER_B[@]}" sh -c 'cd "$1" && shift && exec "$@"' \
		sh "$TDIR/b" "$EGRET" run --via "$EGRETD_SOCK" -- sleep 60 >"$TDIR/sb.out" 2>&1 &
	cb=$!
	wait_for_file "$TDIR/sa.started" 20 || fail "caller A's COMMAND never started: $(cat "$TDIR/sa.out")"
	wait_until 20 sh -c '[ "$(grep -lx "instance=$1" "$2"/* 2>/dev/null | xargs grep -l "^command=[1-9]" 2>/dev/null | wc -l)" = 2 ]' \
		sh "$EGRETD_SOCK" "$STATE_ROOT" || fail "control: two running attempts: $(our_records)"
	# shellcheck disable=SC2046 # one path a line, no spaces
	ida=$(basename "$(grep -lx "caller=$TEST_UID" $(our_records))")
	# shellcheck disable=SC2046
	idb=$(basename "$(grep -lx "caller=$CALLER_B_UID" $(our_records))")
	[ -n "$ida" ] && [ -n "$idb" ] || fail "control: the records of A ($ida) and B ($idb)"
	# As caller A, through egretd (EGRET_SOCKET: what a miner sets).
	out=$(timeout 20 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" env EGRET_SOCKET="$EGRETD_SOCK" \
		"$EGRET" status 2>&1)
	assert_contains "$ida  live" "$out" "caller A's status: its attempt"
	[[ $out != *"$idb"* ]] || fail "caller A's status shows caller B's attempt: $out"
	out=$(timeout 20 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" env EGRET_SOCKET="$EGRETD_SOCK" \
		"$EGRET" status --json 2>&1)
	assert_eq "$ida" "$(jq -r '[.attempts[].id] | join(" ")' <<<"$out")" "caller A's status --json"
	out=$(timeout 20 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" "$EGRET" status --via "$EGRETD_SOCK" "$idb" 2>&1)
	RC=$?
	assert_eq 1 "$RC" "caller A asking for caller B's attempt ($out)"
	assert_eq "no attempt $idb" "$out" "caller A asking for caller B's attempt"
	# egretd's client alone (what a miner's image carries) says the same.
	out=$(timeout 20 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		"$(dirname "$EGRET")/egret-client" status --via "$EGRETD_SOCK" 2>&1)
	assert_contains "$ida  live" "$out" "egret-client status as caller A"
	# Root sees both.
	out=$("$EGRET" status 2>&1)
	assert_contains "$ida" "$out" "root's status: A's attempt"
	assert_contains "$idb" "$out" "root's status: B's attempt"
	kill "$ca" "$cb" 2>/dev/null
	wait "$ca" "$cb" 2>/dev/null
	egretd_stop
}
