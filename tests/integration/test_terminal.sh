# shellcheck shell=bash
# test_terminal.sh - COMMAND and the terminal egret was started from, used
# for real: an interactive shell inside egret under tmux, window size
# changes, Ctrl-C, Ctrl-Z and fg, and the terminal left as it was found.
# (That COMMAND cannot type into that terminal is tests/redteam's
# t_rt_terminal_injection.) Sourced by run.sh.
# SC2016: single-quoted $... belongs to the shell in the pane. SC2013:
# cgroup.procs holds one pid per line. SC2034: ERR is read by said().
# shellcheck disable=SC2016,SC2013,SC2034

# The process in the attempt named COMM: "PID STATE TTY_NR SID" from
# /proc/PID/stat (fields 1, 3, 7 and 6).
proc_of() {	# ID COMM
	local pid
	for pid in $(cat "$(cg_of "$1")/cgroup.procs" 2>/dev/null); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || continue
		sed 's/^.*) //' "/proc/$pid/stat" | awk -v p="$pid" '{ print p, $1, $5, $4 }'
		return 0
	done
	return 1
}

proc_state() {	# ID COMM STATE
	[ "$(proc_of "$1" "$2" | awk '{ print $2 }')" = "$3" ]
}

not_running() {	# ID COMM
	! cg_runs "$1" "$2"
}

egret_line() {	# ID [EGRET_ARGS...] -- COMMAND...: what to type in the pane
	local id=$1
	shift
	echo "nsenter --net=/run/netns/$WORLD_CLIENT $EGRET run -q --policy none --id $id --user $TEST_USER --allow 203.0.113.10:80 $*"
}

# An interactive shell as COMMAND, from a terminal: it gets a pty of its
# own (not the operator's), the terminal's size and its changes, Ctrl-C
# for its foreground job (egret lives on), its exit status; the operator's
# terminal settings are what they were.
t_terminal_pty() {
	local id="$ID_PREFIX-pty" pane line
	tmux_up 100 30 || fail "cannot start tmux"
	trap tmux_down EXIT
	pane=$(tmux -S "$TMUX_SOCK" display -p -t t '#{pane_tty}')
	tmux_line "stty -g >$TDIR/stty.before"
	tmux_line "$(egret_line "$id" -- sh); echo egret-rc=\$?"
	wait_until 10 cg_runs "$id" sh || fail "COMMAND never started: $(tmux_tail)"
	tmux_line 'echo "tty=$(tty) size=$(stty size) uid=$(id -u)"'
	tmux_wait "tty=/dev/pts/" || fail "no answer from the shell in egret: $(tmux_tail)"
	line=$(tmux_screen | grep '^tty=/dev/pts/' | tail -n 1)
	[[ $line == "tty=/dev/pts/"*" size=30 100 uid=$TEST_UID" ]] ||
		fail "COMMAND's terminal: want its own pty of 30x100 as $TEST_UID, got '$line'"
	[ "${line%% *}" != "tty=$pane" ] || fail "COMMAND has the operator's terminal $pane"
	# The resize travels (SIGWINCH, egret, COMMAND's pty) while the shell
	# reads the next line: it waits for it (size_wait, tmux.sh).
	tmux -S "$TMUX_SOCK" resize-window -t t -x 120 -y 40
	tmux_line "$(size_wait "40 120") echo \"resized=\$(stty size)\""
	tmux_wait "resized=40 120" 20 || fail "after a resize to 120x40: $(tmux_tail 3)"
	tmux_line 'sleep 60; echo not-interrupted'
	wait_until 20 cg_runs "$id" sleep || fail "sleep never started"
	tmux_keys C-c
	wait_until 20 not_running "$id" sleep || fail "Ctrl-C did not reach COMMAND's sleep"
	tmux_line 'echo "after-int=$?"'
	tmux_wait "after-int=130" || fail "COMMAND's shell after Ctrl-C: $(tmux_tail 3)"
	! tmux_screen | grep -q '^not-interrupted' || fail "the interrupted list went on"
	assert_attempt_live "$id"
	tmux_line 'exit 7'
	tmux_wait "egret-rc=7" || fail "egret's exit status: $(tmux_tail 3)"
	tmux_line "stty -g >$TDIR/stty.after"
	tmux_sync || fail "the operator's shell does not answer after egret"
	assert_eq "$(cat "$TDIR/stty.before")" "$(cat "$TDIR/stty.after")" \
		"the operator's terminal settings before and after egret"
	assert_no_residue "$id"
}

# Ctrl-Z and fg, as for any job: COMMAND (here not a shell, so its own
# group in its session: the kernel would drop a plain SIGTSTP) stops,
# egret stops, the shell has the terminal; fg resumes both; Ctrl-C ends
# it with 130. Once in a pty of its own, once with egret's stdio
# redirected (COMMAND then has no terminal at all).
t_terminal_job_control() {
	local id="$ID_PREFIX-job" mode redirect proc
	tmux_up 100 30 || fail "cannot start tmux"
	trap tmux_down EXIT
	for mode in pty none; do
		redirect=""
		[ "$mode" = none ] && redirect="</dev/null >$TDIR/o 2>&1"
		# Alone on its line: bash goes on with a list whose job stopped.
		tmux_line "clear; $(egret_line "$id" -- "$P" hold 60) $redirect"
		wait_until 10 cg_runs "$id" probe || fail "$mode: COMMAND never started: $(tmux_tail)"
		proc=$(proc_of "$id" probe)
		if [ "$mode" = none ]; then
			assert_eq 0 "$(echo "$proc" | awk '{ print $3 }')" "$mode: COMMAND's controlling terminal (tty_nr)"
		fi
		[ "$(echo "$proc" | awk '{ print $4 }')" = "$(echo "$proc" | awk '{ print $1 }')" ] ||
			fail "$mode: COMMAND does not lead a session of its own ($proc)"
		tmux_keys C-z
		tmux_wait "Stopped" || fail "$mode: Ctrl-Z: the shell never got the terminal back: $(tmux_tail)"
		wait_until 5 proc_state "$id" probe T || fail "$mode: COMMAND not stopped: $(proc_of "$id" probe)"
		tmux_line fg
		wait_until 5 proc_state "$id" probe S || fail "$mode: fg: COMMAND not running again: $(proc_of "$id" probe)"
		tmux_keys C-c
		wait_until 5 not_running "$id" probe || fail "$mode: Ctrl-C after fg did not end COMMAND"
		tmux_line 'echo "egret-rc=$?"'
		tmux_wait "egret-rc=130" || fail "$mode: egret's status after Ctrl-C: $(tmux_tail 3)"
		assert_no_residue "$id"
	done
}

# --pty without any terminal (a CI job, a miner): COMMAND still gets a pty
# of its own, fed from egret's stdin; without --pty and without a
# terminal, COMMAND has none, and /dev/tty is no way to one.
t_terminal_forced_pty() {
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run -q --policy none --pty \
		--user "$TEST_USER" --allow 203.0.113.10:80 -- \
		sh -c 'echo "tty=$(tty)"; read -r x; echo "got=$x"; exit 3' \
		<<<hello >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(tr -d '\r' <"$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_eq 3 "$RC" "exit status with --pty $(said)"
	grep -q '^tty=/dev/pts/' <<<"$OUT" || fail "--pty: COMMAND's tty $(said)"
	grep -q '^got=hello$' <<<"$OUT" || fail "--pty: COMMAND did not read egret's stdin $(said)"
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run -q --policy none \
		--user "$TEST_USER" --allow 203.0.113.10:80 -- \
		sh -c 'echo "tty=$(tty)"; true </dev/tty 2>/dev/null && echo dev-tty-opened
			read -r x; echo "got=$x"; exit 3' <<<hello >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_eq 3 "$RC" "exit status without --pty $(said)"
	assert_eq $'tty=not a tty\ngot=hello' "$OUT" "COMMAND without a terminal $(said)"
}
