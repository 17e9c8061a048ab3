# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016,SC2034
# test_lifecycle.sh - lifecycle: exit status, signals, users, refusing to start, cleanup.
#
# Sourced by run.sh, which provides the world, attempt, expect_* and
# assert_* helpers. Shellcheck: `A && B || fail` is intended (fail exits);
# $1 in single quotes belongs to the sh -c COMMAND; ALLOW and SINK_LOG are
# read by run.sh's expect_* functions.

# `egret version` and `egret --help` answer and succeed.
t_cli() {
	local v
	v=$("$EGRET" version 2>&1) || fail "egret version: exit $? ($v)"
	[ -n "$v" ] || fail "egret version printed nothing"
	"$EGRET" --help >"$TDIR/help" 2>&1 || fail "egret --help: exit $?"
	grep -q run "$TDIR/help" || fail "egret --help does not mention run"
}

# 6a. Exit statuses, and no leftovers after a normal exit.
t_exit_status() {
	local id="$ID_PREFIX-exit"
	local run=(--id "$id" --user "$TEST_USER" --allow 203.0.113.10:80)
	printf '#!/bin/sh\nexit 0\n' >"$TDIR/noexec"
	chmod 644 "$TDIR/noexec"

	attempt "${run[@]}" -- sh -c 'exit 7'
	assert_eq 7 "$RC" "sh -c 'exit 7' $(said)"
	assert_no_residue "$id"
	attempt "${run[@]}" -- true
	assert_eq 0 "$RC" "true $(said)"
	assert_no_residue "$id"
	attempt "${run[@]}" -- /nonexistent/egret-test-cmd
	assert_eq 127 "$RC" "missing command by path $(said)"
	assert_no_residue "$id"
	# A PATH of only world-searchable dirs: with an unsearchable one (root's
	# ~/.pyenv here) execvp reports EACCES, and whether that is 126 or 127
	# is another question than "not found".
	PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		attempt "${run[@]}" -- egret-test-no-such-cmd
	assert_eq 127 "$RC" "missing command on PATH $(said)"
	attempt "${run[@]}" -- "$TDIR/noexec"
	assert_eq 126 "$RC" "non-executable file $(said)"
	assert_no_residue "$id"
	attempt "${run[@]}" -- "$TDIR"
	assert_eq 126 "$RC" "a directory as COMMAND $(said)"
	attempt "${run[@]}" -- sh -c 'kill -KILL $$'
	assert_eq 137 "$RC" "COMMAND killed by SIGKILL $(said)"
	attempt "${run[@]}" -- sh -c 'kill -TERM $$'
	assert_eq 143 "$RC" "COMMAND killed by SIGTERM $(said)"
	assert_no_residue "$id"
}

# 6b. SIGTERM/SIGHUP/SIGINT sent to egret reach COMMAND.
t_signals() {
	local id="$ID_PREFIX-sig" script epid sig want
	script=$(write_script cmd.sh <<'EOF'
trap 'echo TERM >"$1/got"; exit 42' TERM
touch "$1/ready"
i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
exit 3
EOF
)
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --id "$id" --user "$TEST_USER" --allow 203.0.113.10:80 \
		-- sh "$script" "$TDIR" >"$TDIR/egret.out" 2>&1 &
	epid=$!
	wait_for_file "$TDIR/ready" 15
	assert_is_egret "$epid"
	kill -TERM "$epid"
	reap "$epid" 15
	assert_eq 42 "$REAPED" "COMMAND trapping SIGTERM exits 42 ($(cat "$TDIR/egret.out"))"
	assert_eq TERM "$(cat "$TDIR/got" 2>/dev/null)" "what COMMAND's trap saw"
	assert_no_residue "$id"

	# An untrapped signal kills COMMAND: 128+N. Background jobs of a
	# script start with SIGINT ignored, hence env --default-signal.
	for sig in HUP:129 INT:130 TERM:143; do
		want=${sig#*:} sig=${sig%:*}
		"${WORLD_IN_CLIENT[@]}" env --default-signal=INT "$EGRET" run --policy none --id "$id" \
			--user "$TEST_USER" --allow 203.0.113.10:80 -- "$P" hold 30 \
			>"$TDIR/egret.out" 2>&1 &
		epid=$!
		wait_until 10 cg_runs "$id" probe || fail "COMMAND never started"
		assert_is_egret "$epid"
		kill -"$sig" "$epid"
		reap "$epid" 15
		assert_eq "$want" "$REAPED" "SIG$sig to egret running 'probe hold' ($(cat "$TDIR/egret.out"))"
		assert_no_residue "$id"
	done
}

# One uid, one attempt: while an attempt runs as a uid, a second egret for
# that uid refuses (125, one line naming the first egret) - checked with a
# lock, since two starting together would both find no process of the uid
# yet - unless --allow-shared-uid, which warns. A process of that uid
# outside any attempt is refused the same way (t_rt_ptrace_pidfd).
t_shared_uid() {
	local id="$ID_PREFIX-uid" epid m="$TDIR/second-ran"
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --id "$id" --user "$TEST_USER" \
		--allow 203.0.113.10:80 -- "$P" hold 30 >"$TDIR/first.out" 2>&1 &
	epid=$!
	wait_until 10 cg_runs "$id" probe || fail "the first attempt never started"
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 -- sh -c 'touch "$1"' sh "$m"
	assert_refused "a second attempt as $TEST_USER" "$m"
	[[ $ERR == *"another attempt (egret pid $epid) runs as uid $TEST_UID"* ]] ||
		fail "the refusal does not name the first egret $(said)"
	attempt --user "$TEST_USER" --allow-shared-uid --allow 203.0.113.10:80 -- sh -c 'touch "$1"' sh "$m"
	assert_eq 0 "$RC" "with --allow-shared-uid $(said)"
	assert_exists "$m" "COMMAND's marker with --allow-shared-uid"
	[[ $ERR == *"warning: COMMAND's uid $TEST_UID also runs pid"* ]] ||
		fail "--allow-shared-uid: no warning $(said)"
	kill -TERM "$epid"
	reap "$epid" 15
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 -- true
	assert_eq 0 "$RC" "the uid is free again once the first attempt ended $(said)"
}

# A process outside any attempt of which one thread alone runs as
# COMMAND's uid (a raw setresuid in that thread; its leader stays root):
# refused as a whole process of that uid is, naming its pid. The set's task
# iterator (bpf/tasks.bpf.c) sees every thread's credentials; one that
# looked only at each process's first would let COMMAND start.
t_shared_uid_thread() {
	local pid m="$TDIR/ran"
	python3 -c '
import ctypes, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
uid = int(sys.argv[1])
def become():
    # SYS_setresuid (x86_64): this thread only; libc would change all.
    if libc.syscall(117, uid, uid, uid) != 0:
        sys.exit(1)
    time.sleep(60)
t = threading.Thread(target=become)
t.start()
t.join()
' "$TEST_UID" &
	pid=$!
	# shellcheck disable=SC2064 # expanded now
	trap "kill -KILL $pid 2>/dev/null" EXIT
	wait_until 20 sh -c 'grep -qs "^Uid:[[:space:]]*$2[[:space:]]" /proc/$1/task/*/status' sh "$pid" "$TEST_UID" ||
		fail "no thread of pid $pid runs as $TEST_UID"
	grep -q "^Uid:[[:space:]]*0[[:space:]]" "/proc/$pid/status" || fail "pid $pid's leader is not root"
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 -- sh -c 'touch "$1"' sh "$m"
	assert_refused "an attempt as $TEST_USER while a thread of pid $pid runs as it" "$m"
	[[ $ERR == *"also runs pid $pid "* ]] || fail "the refusal does not name pid $pid $(said)"
	kill -KILL "$pid"
	reap "$pid" 9
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 -- sh -c 'touch "$1"' sh "$m"
	assert_eq 0 "$RC" "once that thread is gone $(said)"
}

# COMMAND's Landlock domain restricts what lies outside the attempt, never
# its files: renames and links across directories (what package managers
# and build caches do: a domain that does not handle REFER refuses them
# with EXDEV), directory moves, device-free work as usual.
t_domain_files() {
	local script
	script=$(write_script files.sh <<'EOF'
cd "$1" && mkdir -p a b c/d && touch a/f && : >c/d/g || exit 9
perl -e 'rename(q(a/f), q(b/f)) or die qq($!\n); print qq(rename ok\n)'
perl -e 'link(q(b/f), q(a/h)) or die qq($!\n); print qq(link ok\n)'
perl -e 'rename(q(c/d), q(a/d)) or die qq($!\n); print qq(dir ok\n)'
EOF
)
	chmod 1777 "$TDIR" && mkdir -m 0777 "$TDIR/w"
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 -- sh "$script" "$TDIR/w"
	assert_eq 0 "$RC" "exit status $(said)"
	assert_eq $'rename ok\nlink ok\ndir ok' "$OUT" "renames and links inside the attempt $(said)"
	assert_exists "$TDIR/w/a/d/g" "the moved directory's file"
}

# COMMAND's environment is its user's: HOME, USER, LOGNAME, SHELL (a
# nologin shell reads as /bin/sh), the caller's places (XDG_RUNTIME_DIR...)
# gone, PATH without the entries it cannot search, the rest passed. With
# --clean-env only the essentials, --pass-env and --setenv. A start
# directory or HOME it cannot use is said in one line before it starts;
# --chdir is entered as COMMAND's user.
t_environment() {
	local pub="$TDIR/pub-bin" priv="$TDIR/priv-bin" home="$TDIR/home" want
	mkdir -m 0755 "$pub" && mkdir -m 0700 "$priv" && mkdir -m 0700 "$home" &&
		chown "$TEST_USER" "$home" || fail "setup"
	RC=0
	OUT=$(cd "$TDIR" && XDG_RUNTIME_DIR=/run/user/0 MAIL=/var/mail/root EGRET_T_KEEP=yes \
		PATH="$priv:$pub:/usr/bin:/bin" "${WORLD_IN_CLIENT[@]}" "$EGRET" run -q \
		--policy none --user "$TEST_USER" -- sh -c \
		'echo "$HOME|$USER|$LOGNAME|$SHELL|${XDG_RUNTIME_DIR-unset}|${MAIL-unset}|$EGRET_T_KEEP|$PATH"' \
		2>"$TDIR/err") || RC=$?
	ERR=$(cat "$TDIR/err")
	want="$(getent passwd "$TEST_USER" | cut -d: -f6)|$TEST_USER|$TEST_USER|/bin/sh|unset|unset|yes|$pub:/usr/bin:/bin"
	assert_eq "$want" "$OUT" "COMMAND's environment by default $(said)"

	OUT=$(cd "$TDIR" && EGRET_T_KEEP=yes LANG=C.UTF-8 "${WORLD_IN_CLIENT[@]}" "$EGRET" run -q \
		--policy none --user "$TEST_USER" --home "$home" --chdir "$home" --clean-env \
		--pass-env LANG --setenv EGRET_T_SET=a=b -- sh -c 'env | sort; pwd' 2>"$TDIR/err")
	ERR=$(cat "$TDIR/err")
	# egret's own variables come whatever the caller passes: the limits
	# manifest's and the denial feed's paths (docs/AGENTS.md), an
	# attempt's id in them.
	OUT=$(sed -E 's|^(EGRET_[A-Z_]*=/run/egret-limits/)[0-9a-f]{16}/|\1ID/|' <<<"$OUT")
	want=$(printf '%s\n' "EGRET_DENIALS=/run/egret-limits/ID/denials.jsonl" \
		"EGRET_LIMITS=/run/egret-limits/ID/limits.txt" \
		"EGRET_LIMITS_JSON=/run/egret-limits/ID/limits.json" "EGRET_T_SET=a=b" \
		"HOME=$home" "LANG=C.UTF-8" "LOGNAME=$TEST_USER" \
		"PATH=/usr/local/bin:/usr/bin:/bin" "PWD=$home" "SHELL=/bin/sh" "USER=$TEST_USER" "$home")
	assert_eq "$want" "$OUT" "--clean-env --pass-env LANG --setenv --home --chdir $(said)"

	# Unusable places: one line each before COMMAND starts, then it runs.
	attempt --user "$TEST_USER" --home "$priv" --chdir "$TDIR" --allow 203.0.113.10:80 -- \
		sh -c 'cd "$1" 2>/dev/null || echo cannot-enter' sh "$priv"
	assert_eq 0 "$RC" "exit status with an unusable HOME $(said)"
	assert_eq cannot-enter "$OUT" "COMMAND ran $(said)"
	grep -q "warning: HOME $priv is not a directory COMMAND's user (uid $TEST_UID) can write" \
		<<<"$ERR" || fail "no warning about HOME $(said)"
	! grep -q "cannot read and search" <<<"$ERR" || fail "a warning about a usable start directory $(said)"
	attempt --user "$TEST_USER" --home "$home" --allow 203.0.113.10:80 -- true
	assert_eq "" "$(grep warning <<<"$ERR")" "warnings with usable places $(said)"

	# --chdir into a directory the user cannot enter: refused, 125.
	attempt --user "$TEST_USER" --home "$home" --chdir "$priv" --allow 203.0.113.10:80 -- \
		sh -c 'touch "$1"' sh "$TDIR/ran"
	assert_refused "--chdir $priv (0700 root)" "$TDIR/ran"
	grep -q "cannot read and search --chdir $priv" <<<"$ERR" ||
		fail "the refusal does not say why $(said)"
}

# --user: COMMAND gets exactly that user's ids, none of root's groups.
t_user() {
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 -- id -u
	assert_eq "$TEST_UID" "$OUT" "uid under --user $TEST_USER $(said)"
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 -- id -G
	assert_eq "$TEST_GID" "$OUT" "groups under --user $TEST_USER $(said)"
	attempt --user "$TEST_UID:$TEST_GID" --allow 203.0.113.10:80 -- sh -c 'id -u; id -g'
	assert_eq "$TEST_UID"$'\n'"$TEST_GID" "$OUT" "--user $TEST_UID:$TEST_GID (numbers) $(said)"
}

# 7. Fail closed: egret refuses (125, one stderr line) and COMMAND never runs.
t_fail_closed() {
	local id="$ID_PREFIX-fc" m="$TDIR/marker" spec v1 pol
	local cmd=(sh -c 'touch "$1"' sh "$m")

	# Control: the marker mechanism works when egret does run COMMAND.
	attempt --id "$id" --user "$TEST_USER" --allow 203.0.113.10:80 -- "${cmd[@]}"
	[ "$RC" = 0 ] && [ -e "$m" ] || fail "control run did not create the marker $(said)"
	rm -f "$m"

	mkdir "$TDIR/plain-dir"
	attempt --id "$id" --cgroup-parent "$TDIR/plain-dir" --user "$TEST_USER" \
		--allow 203.0.113.10:80 -- "${cmd[@]}"
	assert_refused "--cgroup-parent outside cgroup2" "$m"
	touch "$TDIR/file"
	attempt --id "$id" --cgroup-parent "$TDIR/file/sub" --user "$TEST_USER" \
		--allow 203.0.113.10:80 -- "${cmd[@]}"
	assert_refused "--cgroup-parent under a regular file" "$m"
	# A cgroup v1 hierarchy, if this machine has one, is not cgroup2 either.
	v1=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") {
		if ($(i + 1) == "cgroup") { print $5; exit } break } }' /proc/self/mountinfo)
	if [ -n "$v1" ]; then
		attempt --id "$id" --cgroup-parent "$v1" --user "$TEST_USER" \
			--allow 203.0.113.10:80 -- "${cmd[@]}"
		assert_refused "--cgroup-parent on cgroup v1 ($v1)" "$m"
	fi

	for spec in 203.0.113.300:80 203.0.113.10:99999 203.0.113.10:0-99999 \
		203.0.113.10:90-80 203.0.113.0/33 '[2001:db8::1' '[2001:db8::1]:x' \
		'[2001:db8::/129]:80' 203.0.113.10: '203.0.113.10:80,' 203.0.113 ''; do
		attempt --id "$id" --user "$TEST_USER" --allow "$spec" -- "${cmd[@]}"
		assert_refused "--allow '$spec'" "$m"
	done
	# Policy files live in a root-owned 0755 directory (policy_path), so
	# each is refused for its own fault, not for the directory's. A
	# refused policy exits 2 (README), not 125.
	pol=$(policy_path bad.yaml)
	printf 'cidrs: ["203.0.113.10:80", {cidr: \n' >"$pol"
	attempt --id "$id" --user "$TEST_USER" --policy "$pol" -- "${cmd[@]}"
	assert_refused "malformed --policy" "$m" 2
	attempt --id "$id" --user "$TEST_USER" --policy "$(policy_path none.yaml)" -- "${cmd[@]}"
	assert_refused "missing --policy file" "$m" 2
	# --help: the policy must be root-owned and not group/other-writable.
	pol=$(policy_path open.yaml)
	echo 'cidrs: ["203.0.113.10:80"]' >"$pol"
	chmod 666 "$pol"
	attempt --id "$id" --user "$TEST_USER" --policy "$pol" -- "${cmd[@]}"
	assert_refused "world-writable --policy" "$m" 2
	chmod 644 "$pol"
	chown nobody "$pol"
	attempt --id "$id" --user "$TEST_USER" --policy "$pol" -- "${cmd[@]}"
	assert_refused "--policy owned by nobody" "$m" 2
	# ... and so must its directory (whoever can write it can swap the file).
	echo 'cidrs: ["203.0.113.10:80"]' >"$TDIR/in-open-dir.yaml"
	attempt --id "$id" --user "$TEST_USER" --policy "$TDIR/in-open-dir.yaml" -- "${cmd[@]}"
	assert_refused "--policy in a world-writable directory" "$m" 2
	attempt --id "$id" --user egret-test-no-such-user --allow 203.0.113.10:80 -- "${cmd[@]}"
	assert_refused "unknown --user" "$m"
	attempt --id "$id" --egret-test-bogus-flag --user "$TEST_USER" -- "${cmd[@]}"
	assert_refused "unknown option" "$m"

	# Root: refused without --user or --allow-root; runs as root with it.
	attempt --id "$id" --allow 203.0.113.10:80 -- "${cmd[@]}"
	assert_refused "root without --user/--allow-root" "$m"
	attempt --id "$id" --allow-root --allow 203.0.113.10:80 -- sh -c 'id -u; touch "$1"' sh "$m"
	[ "$RC" = 0 ] && [ "$OUT" = 0 ] && [ -e "$m" ] ||
		fail "--allow-root should run COMMAND as uid 0 $(said)"
	assert_no_residue "$id"
}

# A custom --cgroup-parent inside cgroup2 is used, and enforced.
t_cgroup_parent() {
	local id="$ID_PREFIX-cgp" parent="$CG2/$ID_PREFIX-parent" tok
	mkdir "$parent" || fail "cannot create $parent"
	tok=$(token cgp)
	attempt --id "$id" --cgroup-parent "$parent" --user "$TEST_USER" --allow 203.0.113.10:80 \
		-- sh -c 'sed -n "s/^0:://p" /proc/self/cgroup; "$1" tcp 203.0.113.11 80 "$2"' \
		sh "$P" "$tok"
	assert_eq "/$ID_PREFIX-parent/$id
$REFUSED" "$OUT" "COMMAND's cgroup, then a denied probe $(said)"
	world_barrier tcp 203.0.113.11 80 "$(token barrier)" || fail "barrier"
	! world_sink_has "$tok" || fail "denied probe reached the sink"
	assert_absent "$parent/$id" "attempt cgroup under the custom parent after exit"
	assert_absent "$PIN_ROOT/$id" "pins after exit"
	rmdir "$parent" || fail "custom parent $parent not empty after exit"
}

# COMMAND (as the test user) tries to get out: move itself to an outer cgroup,
# delete the pins and the state file. All must fail, and it stays enforced.
t_escape() {
	local id="$ID_PREFIX-esc" script epid tok
	script=$(write_script cmd.sh <<'EOF'
d=$1 P=$2 cg2=$3
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
for c in "$cg2" "$cg2${own%/*}"; do
	echo $$ 2>/dev/null >"$c/cgroup.procs" && echo "moved into $c" >>"$d/escaped"
done
mkdir "$cg2$own/sub" 2>/dev/null && echo $$ 2>/dev/null >"$cg2$own/sub/cgroup.procs"
rm -rf "/sys/fs/bpf/egret/$4" "/run/egret/$4" 2>/dev/null
touch "$d/tampered"
i=0; while [ ! -e "$d/go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
"$P" tcp 203.0.113.11 80 "$5" >"$d/after" 2>/dev/null
sed -n 's/^0:://p' /proc/self/cgroup >"$d/cgroup"
exit 0
EOF
)
	tok=$(token esc)
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --id "$id" --user "$TEST_USER" --allow 203.0.113.10:80 \
		-- sh "$script" "$TDIR" "$P" "$CG2" "$id" "$tok" >"$TDIR/egret.out" 2>&1 &
	epid=$!
	wait_for_file "$TDIR/tampered" 15
	assert_attempt_live "$id"
	find "$PIN_ROOT/$id" -name 'link*' | grep -q . ||
		fail "pinned links gone after COMMAND's rm"
	touch "$TDIR/go"
	reap "$epid" 20
	assert_eq 0 "$REAPED" "egret exit status ($(cat "$TDIR/egret.out"))"
	assert_absent "$TDIR/escaped" "COMMAND moved itself out: $(cat "$TDIR/escaped" 2>/dev/null)"
	case $(cat "$TDIR/cgroup") in
	*/egret/"$id" | */egret/"$id"/sub) ;;
	*) fail "COMMAND ended in cgroup '$(cat "$TDIR/cgroup")'" ;;
	esac
	assert_eq "$REFUSED" "$(cat "$TDIR/after")" "probe after the escape attempts"
	world_barrier tcp 203.0.113.11 80 "$(token barrier)" || fail "barrier"
	! world_sink_has "$tok" || fail "COMMAND reached a denied address after tampering"
	assert_no_residue "$id"
}

# On a normal exit egret kills what COMMAND left running in the cgroup.
t_leftover_killed() {
	local id="$ID_PREFIX-left" bg
	attempt --id "$id" --user "$TEST_USER" --allow 203.0.113.10:80 -- \
		sh -c '("$1" hold 60 >/dev/null 2>&1) & echo $! >"$2/bg"; exit 5' \
		sh "$P" "$TDIR"
	assert_eq 5 "$RC" "exit status $(said)"
	bg=$(cat "$TDIR/bg" 2>/dev/null) || fail "COMMAND did not record its child"
	wait_until 5 not_alive "$bg" || fail "COMMAND's background child $bg outlived egret"
	assert_no_residue "$id"
}
