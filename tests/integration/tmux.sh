# shellcheck shell=bash
# tmux.sh - a real terminal for the terminal tests: a private tmux server
# (its own socket in $TDIR) whose one pane runs a root bash, standing for
# the operator's shell. Tests type into it and read its screen, so what
# they check is what the operator's terminal showed and ran.
#
#   tmux_up COLS ROWS          start it (bash, prompt "$ "; TMUX_AS: a
#                              command prefix for bash, such as setpriv)
#   tmux_line TEXT             type TEXT and Enter
#   tmux_keys KEY...           tmux key names: C-c, C-z, Enter
#   tmux_screen                the pane's text, with history
#   tmux_tail [N]              its last N (5) lines that are not blank
#   tmux_run TEXT [SECONDS]    type TEXT; wait until the shell finished it
#   tmux_wait TEXT [SECONDS]   TEXT appears on the screen
#   tmux_sync                  the shell is at its prompt again
#   size_wait "ROWS COLS"      shell text: wait until the pane's terminal
#                              (or COMMAND's pty) is that size
#   tmux_down                  kill the server

TMUX_SOCK=""
TMUX_AS=()

tmux_up() {
	TMUX_SOCK="$TDIR/tmux.sock"
	tmux -S "$TMUX_SOCK" -f /dev/null new-session -d -s t -x "$1" -y "$2" \
		"${TMUX_AS[@]}" env -i PATH="$PATH" TERM=xterm HOME="$TDIR" PS1='$ ' \
		bash --norc --noprofile || return 1
	tmux_sync
}

tmux_keys() {
	tmux -S "$TMUX_SOCK" send-keys -t t "$@"
}

tmux_line() {
	tmux_keys -l -- "$1"
	tmux_keys Enter
}

tmux_screen() {
	tmux -S "$TMUX_SOCK" capture-pane -p -J -t t -S -300
}

tmux_tail() {
	tmux_screen | grep -v '^[[:space:]]*$' | tail -n "${1:-5}"
}

tmux_wait() {
	local i
	for ((i = 0; i < ${2:-10} * 10; i++)); do
		tmux_screen | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	return 1
}

# A unique line echoed by the shell: once it is on the screen, the shell has
# run everything typed (or pushed into its input) before it. The shell
# computes its end ("-42"), so the typed line itself never matches.
tmux_sync() {
	local t="sync-$RANDOM$RANDOM"
	tmux_line "echo $t-\$((6 * 7))"
	tmux_wait "$t-42" 15
}

# TEXT runs to its end before the next line the shell reads. Whatever
# TEXT pushed into the terminal's input queue comes after that line.
tmux_run() {
	local t="ran-$RANDOM$RANDOM"
	tmux_line "$1; echo $t-\$((6 * 7))"
	tmux_wait "$t-42" "${2:-30}"
}

# For the pane's shell (or COMMAND's in it): text that waits until the
# terminal is ROWS COLS, 10 s at most - a resize travels (SIGWINCH, egret,
# COMMAND's pty) while the shell reads on. Usage:
#   tmux_line "$(size_wait "40 120") echo ..."
size_wait() {
	echo "i=0; while [ \"\$(stty size)\" != \"$1\" ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done;"
}

tmux_down() {
	[ -n "$TMUX_SOCK" ] && tmux -S "$TMUX_SOCK" kill-server 2>/dev/null
	TMUX_SOCK=""
}
