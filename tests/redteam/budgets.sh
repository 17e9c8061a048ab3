# shellcheck shell=bash
# budgets.sh - red-team vectors against an upload budget (docs/POLICY.md,
# "Upload budgets"): a hostile COMMAND trying to carry more than the budget
# to an allowed destination by every path egret counts. Sourced by run.sh.
# The evidence: the world's sink's own byte counts (bytes= of each line)
# for the test's tokens, and refused tokens in none of the world's records.

# Bytes the world's sink logged for lines whose data starts with PREFIX.
sink_bytes() {	# PREFIX
	grep -F -- "data=$1" "$WORLD_LOG" | sed -n 's/.* bytes=\([0-9]*\) .*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}

# A budget of 3000 bytes on one static destination (203.0.113.10, TCP 80 and
# UDP 9999), spent by datagrams of 1000 bytes: at most 3 arrive, whatever
# else is tried after - more datagrams, sendmmsg batches, TCP with data in
# its SYN (Fast Open), a new connection - and the refused ones are nowhere.
t_rt_upload_budget() {
	local u f l pad
	u=$(tk u) f=$(tk f) l=$(tk l)
	pad=$(head -c 960 /dev/zero | tr '\0' x)
	steps in <<EOF
u1 $P udp 203.0.113.10 9999 $u-1-$pad
u2 $P udp 203.0.113.10 9999 $u-2-$pad
u3 $P udp 203.0.113.10 9999 $u-3-$pad
u4 $P udp 203.0.113.10 9999 $u-4-$pad
u5 $P udp-connected 203.0.113.10 9999 $u-5-$pad
u6 $P udp-connected-cmsg 203.0.113.10 9999 $u-6-$pad
tfo $P tcp-fastopen 203.0.113.10 80 $f-$pad
late $P tcp 203.0.113.10 80 $l
EOF
	run_in in --allow 203.0.113.10:80,9999 --upload-limit 3000
	expect u1 ok
	expect u2 ok
	expect u3 ok
	expect u4 "$DROPPED"
	expect u5 "$DROPPED"
	expect u6 "$REFUSED"
	expect tfo "$REFUSED"
	expect late "$REFUSED"
	barriers
	[ "$(sink_bytes "$u-")" -le 3000 ] ||
		fail "the sink received $(sink_bytes "$u-") bytes of datagrams past a 3000-byte budget"
	nowhere "$u-4-" "$u-5-" "$u-6-" "$f" "$l"
	# The same steps outside egret: the kernel alone sends them all.
	run_out in
	oexpect u4 ok
	oexpect tfo ok
}
