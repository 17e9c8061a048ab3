# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016,SC2034
# test_crash.sh - crash and concurrency: SIGKILLed egret, gc, attempts side by side.
#
# Sourced by run.sh, which provides the world, attempt, expect_* and
# assert_* helpers. Shellcheck: `A && B || fail` is intended (fail exits);
# $1 in single quotes belongs to the sh -c COMMAND; ALLOW and SINK_LOG are
# read by run.sh's expect_* functions.

# 8. SIGKILL egret: the pinned links keep enforcing for the leftovers; then
# `egret gc` kills them and removes cgroup, pins and state.
t_kill9() {
	local id="$ID_PREFIX-k9" script epid left tden tudp tok
	script=$(write_script cmd.sh <<'EOF'
d=$1 P=$2
echo $$ >"$d/pid"
i=0; while [ ! -e "$d/go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
"$P" tcp 203.0.113.11 80 "$3" >"$d/denied" 2>/dev/null
"$P" udp 203.0.113.11 9999 "$4" >"$d/denied-udp" 2>/dev/null
"$P" tcp 203.0.113.10 80 "$5" >"$d/allowed" 2>/dev/null
touch "$d/done"
exec "$P" hold 60
EOF
)
	tden=$(token den) tudp=$(token denudp) tok=$(token ok)
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --id "$id" --user "$TEST_USER" --allow 203.0.113.10:80 \
		-- sh "$script" "$TDIR" "$P" "$tden" "$tudp" "$tok" >"$TDIR/egret.out" 2>&1 &
	epid=$!
	# Its content, not only the file: `echo $$ >pid` makes it empty first.
	wait_until 15 test -s "$TDIR/pid" || fail "COMMAND never wrote its pid"
	left=$(cat "$TDIR/pid")
	assert_attempt_live "$id"
	assert_is_egret "$epid"
	kill -KILL "$epid"
	reap "$epid" 10
	alive "$left" || fail "COMMAND died with egret; nothing left to test"

	touch "$TDIR/go"		# the leftover tries only now, egret is gone
	wait_for_file "$TDIR/done" 20
	assert_eq "$REFUSED" "$(cat "$TDIR/denied")" "leftover's tcp to a denied address"
	assert_eq "$REFUSED" "$(cat "$TDIR/denied-udp")" "leftover's udp to a denied address"
	assert_eq ok "$(cat "$TDIR/allowed")" "leftover's tcp to the allowed address"
	world_sink_has "$tok" || fail "allowed token $tok not in the sink log"
	world_barrier tcp 203.0.113.11 80 "$(token barrier)" || fail "tcp barrier"
	world_barrier udp 203.0.113.11 9999 "$(token barrier)" || fail "udp barrier"
	! world_sink_has "$tden" && ! world_sink_has "$tudp" ||
		fail "the leftover reached a denied address after egret died"

	# Still there before gc: the cgroup with the leftover, pins, state.
	assert_attempt_live "$id"
	grep -qx "$left" "$(cg_of "$id")/cgroup.procs" ||
		fail "leftover $left is not in $(cg_of "$id")"

	suite_gc >"$TDIR/gc.out" 2>&1
	assert_eq 0 "$?" "egret gc exit status ($(cat "$TDIR/gc.out"))"
	wait_until 20 not_alive "$left" || fail "egret gc left the leftover $left alive"
	assert_no_residue "$id"
}

# An egret killed with SIGKILL is cleaned up by the next `egret run` too.
t_gc_on_run() {
	local id="$ID_PREFIX-gcr" epid left
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --id "$id" --user "$TEST_USER" --allow 203.0.113.10:80 \
		-- sh -c 'echo $$ >"$1/pid"; exec "$2" hold 60' sh "$TDIR" "$P" \
		>"$TDIR/egret.out" 2>&1 &
	epid=$!
	# Its content, not only the file: `echo $$ >pid` makes it empty first.
	wait_until 15 test -s "$TDIR/pid" || fail "COMMAND never wrote its pid"
	left=$(cat "$TDIR/pid")
	wait_until 20 cg_runs "$id" probe || fail "COMMAND never started"
	assert_is_egret "$epid"
	kill -KILL "$epid"
	reap "$epid" 10
	alive "$left" || fail "COMMAND died with egret"
	# An egret under another cgroup parent (another deployment, another
	# suite) leaves it: the start-time sweep is its own parent's only.
	attempt --cgroup-parent "$SUITE_CG/other-parent" --user "$(own_uid 10)" \
		--allow 203.0.113.10:80 -- true
	assert_eq 0 "$RC" "a run under another parent $(said)"
	alive "$left" || fail "a run under another cgroup parent removed this parent's stale attempt"
	rmdir "$SUITE_CG/other-parent" 2>/dev/null
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 -- true
	assert_eq 0 "$RC" "the next run $(said)"
	wait_until 20 not_alive "$left" || fail "the next egret run left stale $left alive"
	assert_no_residue "$id"
}

# 9. Two attempts at once, different allowlists: each reaches only its own,
# and a third egret (gc, and a run) leaves both alive and enforcing.
t_concurrent() {
	local script n r pa pb tk
	script=$(write_script cmd.sh <<'EOF'
d=$1 P=$2 n=$3 t=$4
echo $$ >"$d/$n.pid"
for r in 1 2; do
	i=0; while [ ! -e "$d/go$r" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	"$P" tcp 203.0.113.10 80 "$t-$n-$r-10" >"$d/$n.$r.10" 2>/dev/null
	"$P" tcp 203.0.113.11 80 "$t-$n-$r-11" >"$d/$n.$r.11" 2>/dev/null
	"$P" tcp 198.51.100.7 80 "$t-$n-$r-7" >"$d/$n.$r.7" 2>/dev/null
	touch "$d/$n.done$r"
done
EOF
)
	tk=$(token conc)
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --id "$ID_PREFIX-a" --user "$(own_uid 1)" \
		--allow 203.0.113.10:80 -- sh "$script" "$TDIR" "$P" a "$tk" \
		>"$TDIR/a.out" 2>&1 &
	pa=$!
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --id "$ID_PREFIX-b" --user "$(own_uid 2)" \
		--allow 203.0.113.11:80 -- sh "$script" "$TDIR" "$P" b "$tk" \
		>"$TDIR/b.out" 2>&1 &
	pb=$!
	wait_for_file "$TDIR/a.pid" 15
	wait_for_file "$TDIR/b.pid" 15

	for r in 1 2; do
		touch "$TDIR/go$r"
		wait_for_file "$TDIR/a.done$r" 20
		wait_for_file "$TDIR/b.done$r" 20
		world_barrier tcp 203.0.113.10 80 "$(token barrier)" || fail "barrier .10"
		world_barrier tcp 203.0.113.11 80 "$(token barrier)" || fail "barrier .11"
		world_barrier tcp 198.51.100.7 80 "$(token barrier)" || fail "barrier .7"
		for n in a b; do
			local own=10 other=11
			[ "$n" = b ] && own=11 other=10
			assert_eq ok "$(cat "$TDIR/$n.$r.$own")" "round $r: $n to its own address"
			assert_eq "$REFUSED" "$(cat "$TDIR/$n.$r.$other")" "round $r: $n to the other's"
			world_sink_has "$tk-$n-$r-$own" || fail "round $r: $n's own token missing"
			! world_sink_has "$tk-$n-$r-$other" || fail "round $r: $n reached the other's address"
			assert_eq "$REFUSED" "$(cat "$TDIR/$n.$r.7")" "round $r: $n to 198.51.100.7"
			! world_sink_has "$tk-$n-$r-7" || fail "round $r: $n reached 198.51.100.7"
		done
		[ "$r" = 2 ] && break

		# A third egret between the rounds must not touch either attempt.
		suite_gc >"$TDIR/gc.out" 2>&1
		assert_eq 0 "$?" "egret gc exit status ($(cat "$TDIR/gc.out"))"
		ALLOW=(--allow 198.51.100.7:80)
		expect_allowed tcp 198.51.100.7 80	# a whole third run, gc included
		# Reusing a live attempt's id must be refused, not join or alter
		# it (round 2 checks a still cannot reach 198.51.100.7).
		attempt --id "$ID_PREFIX-a" --user "$TEST_USER" --allow 198.51.100.7:80 \
			-- sh -c 'touch "$1"' sh "$TDIR/dup-marker"
		assert_refused "--id of a live attempt" "$TDIR/dup-marker"
		for n in a b; do
			alive "$(cat "$TDIR/$n.pid")" || fail "$n's COMMAND died during the third egret"
			assert_attempt_live "$ID_PREFIX-$n"
			grep -q "/egret/$ID_PREFIX-$n\$" "/proc/$(cat "$TDIR/$n.pid")/cgroup" ||
				fail "$n's COMMAND left its cgroup"
		done
		alive "$pa" && alive "$pb" || fail "an egret died during the third egret"
	done
	reap "$pa" 15
	assert_eq 0 "$REAPED" "egret a exit status ($(cat "$TDIR/a.out"))"
	reap "$pb" 15
	assert_eq 0 "$REAPED" "egret b exit status ($(cat "$TDIR/b.out"))"
	assert_no_residue "$ID_PREFIX-a"
	assert_no_residue "$ID_PREFIX-b"
}

# Many attempts starting at once: each runs its own gc over /run/egret
# while the others are still creating their records. A record being born
# must be neither locked away from its creator nor removed (found by the
# benchmark's 50 concurrent launches: "create record ... Resource
# temporarily unavailable").
t_many_concurrent() {
	local i n=40 failed=0 pids=()

	for i in $(seq "$n"); do
		"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none -q --user "$(own_uid $((100 + i)))" \
			--allow 203.0.113.10:80 -- true >"$TDIR/many.$i" 2>&1 &
		pids+=("$!")
	done
	for i in $(seq "$n"); do
		wait "${pids[$((i - 1))]}" || {
			failed=$((failed + 1))
			note "attempt $i: $(head -n1 "$TDIR/many.$i")"
		}
	done
	assert_eq 0 "$failed" "attempts of $n started at once that failed"
	# Hidden names (`ls -A`: plain ls never lists them), both kinds
	# (.new-ID..., .ID.new-...), of writers that are gone: a live one
	# (another suite's) holds its file's lock.
	assert_eq "" "$(ls -A /run/egret 2>/dev/null | grep -v "^$ID_PREFIX" |
		grep -E '^\.(new-|.*\.new-)' | while read -r f; do
			lock_free "/run/egret/$f" && echo "$f"; done)" \
		"unpublished records left behind"
}

# Nobody holds a lock on PATH (false too if it is gone; opened read-only,
# never created).
lock_free() {
	local fd r
	{ exec {fd}<"$1"; } 2>/dev/null || return 1
	flock -n "$fd"
	r=$?
	exec {fd}<&-
	return "$r"
}

# Run last. Nothing the suite's writers left half-written outlives them
# (lib/atomic_file.h): no hidden file of a dead writer (one nobody holds
# locked) for the suite's uids in /run/egret-uids, nor for its attempts in
# /run/egret, after every test above, egretd's killed ones included.
t_half_written_none() {
	local f u left=
	for f in /run/egret-uids/.owner-*.new-* /run/egret/."$ID_PREFIX"*.new-* \
		/run/egret/.new-"$ID_PREFIX"*; do
		[ -e "$f" ] || continue
		case $f in /run/egret-uids/*)
			u=${f#/run/egret-uids/.owner-}
			u=${u%%.*}
			[ "$u" -ge "$SUITE_UIDS" ] && [ "$u" -lt $((SUITE_UIDS + 1000)) ] || continue
			;;
		esac
		flock -n "$f" true && left="$left ${f}"
	done
	assert_eq "" "$left" "hidden files of dead writers"
}
