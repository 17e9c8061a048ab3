# shellcheck shell=bash
# shellcheck disable=SC2015,SC2034
# test_spare.sh - program sets loaded in advance (user/enforce/spare.h): an attempt
# leaves one for the next, the next takes it and enforces exactly as with
# programs loaded on the spot, and a spare that is not what egret made is
# refused (loaded now instead), never used.
#
# Sourced by run.sh. Evidence: what `egret run -v` says about its programs,
# the probe's errno and the world's sink, the spare directories.

SPARES=/sys/fs/bpf/egret-spares

# The ready spares of the default sizes (65536 entries, 4096 prefixes).
spares_ready() {
	find "$SPARES" -mindepth 1 -maxdepth 1 -name 'spare_*_65536_4096_*' 2>/dev/null | sort
}

wait_spare() {
	wait_until 20 eval '[ -n "$(spares_ready)" ]' || fail "no spare appeared in $SPARES"
}

# 1. The first attempt loads now and leaves a spare; the next takes it and
# enforces the same: denied stays denied (EPERM, nothing lands), allowed
# lands. Other sizes and --no-spare load now.
t_spare_taken() {
	local tok spare
	tok=$(token spare)
	"$EGRET" gc --spares >/dev/null || fail "egret gc --spares"
	assert_eq "" "$(spares_ready)" "spares after gc --spares"
	attempt -v --user "$TEST_USER" --allow 203.0.113.10:80 -- "$P" tcp 203.0.113.10 80 "$tok-a"
	assert_eq ok "$OUT" "first attempt's allowed probe $(said)"
	grep -q "(BPF load [0-9.]* ms, loaded now)" <<<"$ERR" || fail "first attempt: $(said)"
	wait_spare
	assert_eq "root 700" "$(stat -c '%U %a' "$SPARES")" "owner and mode of $SPARES"
	spare=$(spares_ready | head -n 1)
	assert_eq "root 700" "$(stat -c '%U %a' "$spare")" "owner and mode of $spare"

	attempt -v --user "$TEST_USER" --allow 203.0.113.10:80 -- sh -c \
		"\"$P\" tcp 203.0.113.11 80 $tok-denied; \"$P\" tcp 203.0.113.10 80 $tok-allowed"
	grep -q "(BPF load [0-9.]* ms, programs loaded in advance)" <<<"$ERR" ||
		fail "second attempt did not take the spare: $(said)"
	assert_eq "$REFUSED ok" "$(echo $OUT)" "second attempt's probes $(said)"
	assert_landed "$tok-allowed" 203.0.113.10:80 "allowed probe with a spare"
	assert_not_landed "$tok-denied" tcp 203.0.113.11 80 "denied probe with a spare"
	assert_absent "$spare" "the spare the second attempt took"

	wait_spare
	attempt -v --user "$TEST_USER" --max-entries 1000 -- true
	grep -q "loaded now" <<<"$ERR" || fail "--max-entries 1000 took a spare of another size: $(said)"
	attempt -v --user "$TEST_USER" --no-spare -- true
	grep -q "loaded now" <<<"$ERR" || fail "--no-spare took a spare: $(said)"
	"$EGRET" gc --spares >/dev/null
}

# 2. A spare that holds an allow entry is not one egret made: the attempt
# refuses it, loads now, and the address stays denied.
t_spare_tampered() {
	local spare tok value
	tok=$(token tamper)
	"$EGRET" gc --spares >/dev/null
	attempt --user "$TEST_USER" -- true
	wait_spare
	spare=$(spares_ready | head -n 1)
	# 203.0.113.11, any port, never expires: rule 0 of struct egret_allow.
	value="ff ff ff ff ff ff ff ff 00 00 ff ff 00 00 00 00$(printf ' 00%.0s' $(seq 120))"
	# shellcheck disable=SC2086 # the hex bytes are words
	bpftool map update pinned "$spare/egret_allow4" key 203 0 113 11 value hex $value ||
		fail "could not plant an entry in $spare"
	attempt -v --user "$TEST_USER" -- "$P" tcp 203.0.113.11 80 "$tok"
	assert_eq "$REFUSED" "$OUT" "probe to the planted address $(said)"
	assert_not_landed "$tok" tcp 203.0.113.11 80 "planted address"
	grep -q "loaded now" <<<"$ERR" || fail "the tampered spare was used: $(said)"
	[ ! -e "$spare" ] || fail "tampered spare $spare was left in place"

	# Two spares with their allow maps swapped: every map is empty and of
	# the right kind, but the programs use the other spare's maps.
	"$EGRET" gc --spares >/dev/null
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run -q --policy none --user "$(own_uid 9)" -- true &
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run -q --policy none --user "$(own_uid 10)" -- true
	wait
	wait_until 20 eval '[ "$(spares_ready | wc -l)" -ge 2 ]' ||
		fail "two spares never appeared: $(spares_ready)"
	mapfile -t two < <(spares_ready)
	mv "${two[0]}/egret_allow4" "$SPARES/swap_pin" &&
		mv "${two[1]}/egret_allow4" "${two[0]}/egret_allow4" &&
		mv "$SPARES/swap_pin" "${two[1]}/egret_allow4" ||
		fail "could not swap the spares' maps"
	attempt -v --user "$TEST_USER" -- "$P" tcp 203.0.113.11 80 "$tok-swap"
	assert_eq "$REFUSED" "$OUT" "probe after the swap $(said)"
	grep -q "loaded now" <<<"$ERR" || fail "a spare with another spare's map was used: $(said)"
	"$EGRET" gc --spares >/dev/null
}
