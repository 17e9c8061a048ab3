# shellcheck shell=bash
# shellcheck disable=SC2015,SC2034
# test_shared.sh - one set of programs for every attempt
# (user/enforce/shared.h): the first attempt loads and pins it, the next
# ones attach the very same programs, which egret-keep holds attached
# (and refuses everything to); two attempts at once never see each
# other's entries; an attempt leaves no entry behind; a pinned set that is
# not what egret made is refused (loaded again), never used.
#
# Sourced by run.sh. Evidence: what `egret run -v` says about its programs,
# program ids from bpftool, the probe's errno and the world's sink, and
# the set's maps dumped with bpftool.

SHARED=/sys/fs/bpf/egret-programs

# The pinned set of this build (its tag: `egret version`).
shared_set() {
	local tag
	tag=$("$EGRET" version | sed -n 's/.*(programs \([0-9a-f]*\)).*/\1/p')
	[ -n "$tag" ] && [ -d "$SHARED/$tag" ] && echo "$SHARED/$tag"
}

# Is the set of lock file LOCK held by someone (an attempt or an egretd
# of another suite, or of the host)? gc --programs leaves it then.
set_in_use() {
	! flock -n -x "$1" true 2>/dev/null
}

# The id of the program an attempt's pinned link holds. Usage: link_prog ID NAME
link_prog() {
	bpftool -j link show pinned "$PIN_ROOT/$1/link_$2" 2>/dev/null | jq -r '.prog_id'
}

# How many keys of a pinned map begin with attempt KEY (hash keys: at 0).
# Usage: keys_of PIN KEY
keys_of() {
	bpftool -j map dump pinned "$1" 2>/dev/null |
		jq "[.[] | select(.formatted.key.attempt == $2)] | length"
}

# 1. The first attempt loads and pins the set; the next takes the very
# same programs and enforces the same: denied stays denied (refused,
# nothing lands), allowed lands. --no-shared loads its own.
t_shared_set_reused() {
	local tok set prog
	tok=$(token shared)
	"$EGRET" gc --programs --under "$SUITE_CG" >/dev/null || fail "egret gc --programs"
	set=$(shared_set)
	if [ -n "$set" ]; then
		# Another egret on this host uses it: gc rightly left it.
		set_in_use "/run/egret/.programs/$(basename "$set").lock" ||
			fail "gc --programs left $set, which nobody uses"
		note "the set is in use on this host: the first-load check needs it free"
	fi
	attempt -v --user "$TEST_USER" --allow 203.0.113.10:80 -- "$P" tcp 203.0.113.10 80 "$tok-a"
	assert_eq ok "$OUT" "first attempt's allowed probe $(said)"
	[ -n "$set" ] || grep -q "(BPF programs [0-9.]* ms, loaded now)" <<<"$ERR" ||
		fail "first attempt: $(said)"
	set=$(shared_set)
	[ -n "$set" ] || fail "the first attempt pinned no set in $SHARED"
	assert_eq "root 700" "$(stat -c '%U %a' "$SHARED")" "owner and mode of $SHARED"
	assert_eq "root 700" "$(stat -c '%U %a' "$set")" "owner and mode of $set"
	prog=$(bpftool -j prog show pinned "$set/prog_egret_connect4" | jq -r '.id')
	# The same programs hold the kernel's cgroup hooks on from egret-keep,
	# where a process (only root can put one there) is refused everything:
	# its storage names no attempt.
	bpftool -j cgroup show "$CG2/egret-keep" | jq -e --argjson p "$prog" 'map(.id) | index($p) != null' >/dev/null ||
		fail "egret-keep does not hold the set's connect4 ($prog): $(bpftool cgroup show "$CG2/egret-keep" 2>&1)"
	# shellcheck disable=SC2016 # $$ and $1.. are the inner shell's
	assert_eq "err EPERM" "$("${WORLD_IN_CLIENT[@]}" sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" tcp 203.0.113.10 80 "$3"' \
		- "$CG2/egret-keep" "$P" "$tok-keep" 2>/dev/null)" "a probe inside egret-keep"
	assert_not_landed "$tok-keep" tcp 203.0.113.10 80 "a probe inside egret-keep"

	start_bg --id "$ID_PREFIX-sh1" --user "$TEST_USER" -v --allow 203.0.113.10:80 -- sh -c \
		"\"$P\" tcp 203.0.113.11 80 $tok-denied; \"$P\" tcp 203.0.113.10 80 $tok-allowed; touch $TDIR/ready; while [ ! -e $TDIR/go ]; do sleep 0.1; done"
	wait_ready "$TDIR/ready"
	assert_eq "$prog" "$(link_prog "$ID_PREFIX-sh1" egret_connect4)" \
		"the second attempt's connect4 is the set's program"
	finish_bg "$TDIR/go"
	grep -q "(BPF programs [0-9.]* ms, the pinned set)" <<<"$ERR" ||
		fail "second attempt did not use the pinned set: $(said)"
	# shellcheck disable=SC2086,SC2116 # one line of the probes' answers
	assert_eq "$REFUSED ok" "$(echo $OUT)" "second attempt's probes $(said)"
	assert_landed "$tok-allowed" 203.0.113.10:80 "allowed probe, pinned set"
	assert_not_landed "$tok-denied" tcp 203.0.113.11 80 "denied probe, pinned set"

	attempt -v --user "$TEST_USER" --no-shared -- true
	grep -q "loaded now" <<<"$ERR" || fail "--no-shared used the pinned set: $(said)"
	assert_eq "$prog" "$(bpftool -j prog show pinned "$set/prog_egret_connect4" | jq -r '.id')" \
		"the set after a --no-shared attempt"
}

# 2. Two attempts at once on the same programs: A allows 203.0.113.10:80,
# B nothing. B is refused there and nothing of it lands, while A's lands;
# once A is gone, none of its entries is left in the set's maps.
t_shared_isolation() {
	local tok set a=$ID_PREFIX-isoa cga
	tok=$(token iso)
	attempt --user "$TEST_USER" -- true	# the set exists
	set=$(shared_set)
	start_bg --id "$a" --user "$TEST_USER" --allow 203.0.113.10:80 --allow 203.0.113.0/28:8080 \
		-- sh -c "touch $TDIR/ready; while [ ! -e $TDIR/go ]; do sleep 0.1; done; \"$P\" tcp 203.0.113.10 80 $tok-a"
	wait_ready "$TDIR/ready"
	cga=$(stat -c %i "$EGRET_CG_PARENT/$a") || fail "no cgroup for $a"
	assert_eq 1 "$(keys_of "$set/egret_allow4" "$cga")" "A's exact entries in the set's egret_allow4"

	attempt --user "$(own_uid 9)" -- sh -c \
		"\"$P\" tcp 203.0.113.10 80 $tok-b; \"$P\" tcp 203.0.113.10 8080 $tok-b8080"
	# shellcheck disable=SC2086,SC2116 # one line of the probes' answers
	assert_eq "$REFUSED $REFUSED" "$(echo $OUT)" "B's probes to A's allowed destinations $(said)"
	assert_not_landed "$tok-b" tcp 203.0.113.10 80 "B's probe to A's address"
	assert_not_landed "$tok-b8080" tcp 203.0.113.10 8080 "B's probe to A's prefix"

	finish_bg "$TDIR/go"
	assert_eq 0 "$RC" "A's exit status $(said)"
	assert_eq ok "$OUT" "A's probe $(said)"
	assert_landed "$tok-a" 203.0.113.10:80 "A's allowed probe"
	assert_eq 0 "$(keys_of "$set/egret_allow4" "$cga")" "A's entries in egret_allow4 after it ended"
	assert_eq 0 "$(bpftool -j map dump pinned "$set/egret_cidr4" |
		jq "[.[] | select(.formatted.key.attempt[0] + .formatted.key.attempt[1] * 4294967296 == $cga)] | length")" \
		"A's prefixes in egret_cidr4 after it ended"
	assert_eq 0 "$(bpftool -j map dump pinned "$set/egret_slots" | jq "[.[] | select(.formatted.value == $cga)] | length")" \
		"slots A still holds after it ended"
}

# 3. A set whose allow map is not the one its programs use (a map of the
# same kind and size pinned in its place) is not one egret made: the
# attempt refuses it, loads and pins a new one, and enforces.
t_shared_tampered() {
	local tok set
	tok=$(token tamper)
	attempt --user "$TEST_USER" -- true
	set=$(shared_set)
	rm -f "$set/egret_allow4"
	bpftool map create "$set/egret_allow4" type hash key 16 value 136 entries 262144 \
		name egret_allow4 flags 1 || fail "could not pin a stand-in egret_allow4"
	attempt -v --user "$TEST_USER" --allow 203.0.113.10:80 -- sh -c \
		"\"$P\" tcp 203.0.113.11 80 $tok-denied; \"$P\" tcp 203.0.113.10 80 $tok-allowed"
	grep -q "unusable" <<<"$ERR" || fail "the tampered set was not refused: $(said)"
	grep -q "loaded now" <<<"$ERR" || fail "the tampered set was used: $(said)"
	# shellcheck disable=SC2086,SC2116 # one line of the probes' answers
	assert_eq "$REFUSED ok" "$(echo $OUT)" "probes after the tampered set $(said)"
	assert_not_landed "$tok-denied" tcp 203.0.113.11 80 "denied probe after the tampered set"
	attempt -v --user "$TEST_USER" -- true
	grep -q "the pinned set" <<<"$ERR" || fail "the set made again was not pinned: $(said)"
}
