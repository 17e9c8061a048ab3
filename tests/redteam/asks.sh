# shellcheck shell=bash
# shellcheck disable=SC2016 # $1 and $EGRET_REQUEST in single quotes are the inner shell's
# asks.sh - red-team rows of the attempt's request socket (`egret
# request`, attempt/inbox.h): sourced by run.sh. What it takes is always
# only a pending request; here: who else may ask, a flood, and what an
# agent's words may do to the operator's terminal.

# ask.py: the wire itself (requests/ask.h), no egret binary: one message
# per connection, the answer's first line printed. Usage:
#   python3 ask.py SOCKET flood N        N asks for n<i>.flood.example
#   python3 ask.py SOCKET raw HEX        one message, bytes given in hex
#   python3 ask.py SOCKET idle N HEX     N connections that never send,
#                                        then the message
ask_py() {
	write_script ask.py <<'EOF2'
import socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
def ask(msg):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(path)
    s.send(msg)
    a = s.recv(512).decode("ascii", "replace").splitlines()[0]
    s.close()
    return a
if mode == "flood":
    t0, pending = time.monotonic(), 0
    for i in range(int(sys.argv[3])):
        a = ask(b"n%d.flood.example:443\0need it" % i)
        pending += a.startswith("pending")
    print("pending %d elapsed_ms %d" % (pending, (time.monotonic() - t0) * 1000))
elif mode == "raw":
    print(ask(bytes.fromhex(sys.argv[3])))
else:
    idle = []
    for _ in range(int(sys.argv[3])):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        idle.append(s)
    print(ask(bytes.fromhex(sys.argv[4])))
EOF2
}

hex() { printf '%b' "$1" | od -An -v -tx1 | tr -d ' \n'; }

# Another attempt's process (it learned the path), and a process outside
# any attempt (root's, on the host), ask on attempt B's socket: both are
# refused by the kernel's word on who they are (their cgroup), and nothing
# is filed for either repository.
t_rt_request_peer() {
	local ask path _ msg
	ask=$(ask_py) msg=$(hex 'stolen.example:443\0from elsewhere')
	attempt_bg --repo owner/b --state-dir "$TDIR/state" -- sh -c \
		'echo "$EGRET_REQUEST" >"$1/b.path"; i=0; while [ ! -e "$1/b.go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done' \
		sh "$TDIR"
	for _ in $(seq 100); do [ -s "$TDIR/b.path" ] && break; sleep 0.1; done
	path=$(cat "$TDIR/b.path")
	[ -n "$path" ] || { : >"$TDIR/b.go"; attempt_reap; fail "attempt B did not start $(said)"; }
	local bg_out=$TDIR/out bg_err=$TDIR/err
	mv "$bg_out" "$TDIR/b.out"; mv "$bg_err" "$TDIR/b.err"
	attempt --allow-shared-uid --repo owner/a --state-dir "$TDIR/state" -- python3 "$ask" "$path" raw "$msg"
	local from_a=$OUT
	local from_host
	from_host=$(python3 "$ask" "$path" raw "$msg" 2>&1)
	: >"$TDIR/b.go"
	reap "$EPID" 30
	assert_eq "refused: not a process of this attempt" "$from_a" "another attempt's process [$ERR]"
	assert_eq "refused: not a process of this attempt" "$from_host" "a process outside any attempt"
	grep -q "refused 0 over the rate, 2 from outside the attempt" "$TDIR/b.err" ||
		fail "attempt B's count of asks from outside: $(cat "$TDIR/b.err")"
	[ -z "$("$EGRET" requests list --all --json --state-dir "$TDIR/state" | jq -r '.requests[] | select(.target == "stolen.example") | .repo')" ] ||
		fail "a request was filed from outside: $("$EGRET" requests list --all --state-dir "$TDIR/state")"
}

# A flood: ASK_PER_MINUTE (10) are filed, one more per 6 s of flood; the
# rest are answered "refused: rate", counted in egret's log. Connections
# that never send hold no one up: the next asker is answered.
t_rt_request_flood() {
	local ask pending ms want
	ask=$(ask_py)
	attempt --repo owner/flood --state-dir "$TDIR/state" -- sh -c \
		'python3 "$1" "$EGRET_REQUEST" flood 100; python3 "$1" "$EGRET_REQUEST" idle 8 "$2"' \
		sh "$ask" "$(hex 'late.example:443\0after idle ones')"
	assert_eq 0 "$RC" "egret exit status $(said)"
	pending=$(awk '$1 == "pending" { print $2 }' <<<"$OUT")
	ms=$(awk '$1 == "pending" { print $4 }' <<<"$OUT")
	want=$((10 + ms / 6000))
	assert_eq "$want" "$pending" "asks filed of 100 in $ms ms $(said)"
	assert_eq "refused: rate" "$(sed -n 2p <<<"$OUT" | cut -d: -f1-2)" \
		"the ask after idle connections is answered (and over the rate) $(said)"
	grep -q "in-band requests: $want filed; refused $((101 - want)) over the rate" <<<"$ERR" ||
		fail "egret's count of the flood $(said)"
	assert_eq "$want" "$("$EGRET" requests list --json --state-dir "$TDIR/state" --repo owner/flood |
		jq '[.requests[] | select(.why == "need it")] | length')" "pending requests after the flood"
}

# What an agent writes is the operator's to read: terminal escapes (7-bit
# and C1), a newline forging a second row, tabs splitting the store's
# record, bytes past a NUL; a target with a newline, a message over 512
# bytes, one without a reason. `egret requests list` shows one request,
# its reason printable, no control byte anywhere; the rest refused.
t_rt_request_escapes() {
	local ask t j over
	ask=$(ask_py)
	over=$(printf 'big.example:443\0%0600d' 0 | od -An -v -tx1 | tr -d ' \n')
	steps esc <<EOF
why python3 $ask "\$EGRET_REQUEST" raw $(hex 'evil.example:443\0\033]0;pwned\007\033[2J\x9b31mred\t9\tpending\n2 pending owner/x fake.example:443\0hidden')
target python3 $ask "\$EGRET_REQUEST" raw $(hex 'evil.example\n7 pending:443\0x')
over python3 $ask "\$EGRET_REQUEST" raw $over
noreason python3 $ask "\$EGRET_REQUEST" raw $(hex 'evil.example:443')
EOF
	run_in esc --repo owner/esc --state-dir "$TDIR/state"
	expect why "pending: the operator reviews it; it stays refused unless they approve it, which takes effect at once, in this attempt too"
	expect target "refused: the target has a character no host or address has"
	expect over "refused: the request is over 512 bytes"
	expect_re noreason "^refused: no reason"
	t=$("$EGRET" requests list --state-dir "$TDIR/state")
	assert_eq 3 "$(wc -l <<<"$t")" "the list: a header, a row and its reason line [$t]"
	! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f-\xff]' <<<"$t" ||
		fail "a control byte in egret requests list: $(od -c <<<"$t" | head -20)"
	assert_eq 'asked by the agent: "?]0;pwned??[2J?31mred 9 pending 2 pending owner/x fake.example:443"' \
		"$(sed -n 3p <<<"$t" | sed 's/^ *//')" "the reason as shown"
	j=$("$EGRET" requests list --json --state-dir "$TDIR/state")
	assert_eq '1 evil.example "?]0;pwned??[2J?31mred 9 pending 2 pending owner/x fake.example:443"' \
		"$(jq -r '"\(.requests | length) \(.requests[0].target) \(.requests[0].why | tojson)"' <<<"$j")" \
		"the request as JSON"
}
