# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016 # `A && B || fail` is meant (fail exits); $1 in single quotes is the inner shell's
# test_worktree.sh - what an attempt leaves in the worktree is no way out
# (issue 39): git's pointers choose nothing the next attempt gets
# (git/layout.h), the configuration the miner's git runs is read-only in
# the view (launch/view_git.h), `egret git` harvests without running what
# the worktree planted (git/harvest.h), mounts land on the directories
# checked, and nothing an attempt makes is writable by others. Sourced by
# run.sh after test_egretd.sh (egretd_start, via, via_b, VIA_DIR).

GITC=(git -c user.name=caller -c user.email=caller@example.invalid -c init.defaultBranch=main)

# The caller's repositories in TDIR: a bare remote, a clone of it with one
# commit pushed, a `git worktree add` of the clone (../wt); and a secret of
# the caller's outside them (secret/id_rsa, 0600), which no attempt may
# read.
wt_repos() {
	"${AS_TEST_USER[@]}" sh -c 'set -e; cd "$1"; shift
		"$@" init -q --bare remote.git
		"$@" clone -q remote.git clone 2>/dev/null
		cd clone; echo one >a; "$@" add a; "$@" commit -qm init; "$@" push -q origin HEAD:main
		"$@" worktree add -q ../wt
		cd ..; mkdir -m 700 secret; echo SECRET >secret/id_rsa; chmod 600 secret/id_rsa' \
		sh "$TDIR" "${GITC[@]}" || fail "the caller's repositories"
}

# as_caller CMD...: CMD as the caller (outside any attempt), in TDIR,
# with a HOME of the test's.
as_caller() {
	if [ ! -e "$TDIR/home" ]; then
		mkdir "$TDIR/home" &&
			printf '[user]\n\tname = caller\n\temail = caller@example.invalid\n' >"$TDIR/home/.gitconfig" &&
			chown -R "$TEST_UID:$TEST_GID" "$TDIR/home" || fail "the caller's HOME"
	fi
	env HOME="$TDIR/home" "${AS_TEST_USER[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" "$@"
}

# The worktree's .git names the caller's secret (as an attempt rewrote it
# before this fix): attempt 1 can no longer rewrite it (read-only in the
# view); rewritten by hand, attempt 2 is refused in one line, and never
# reads the secret.
t_wt_gitdir_redirect() {
	local m="$TDIR/marker" before
	egretd_start
	wt_repos
	before=$(cat "$TDIR/wt/.git")
	VIA_DIR=$TDIR/wt via -- sh -c 'printf "gitdir: %s\n" "$1" >.git; echo rc=$?' sh "$TDIR/secret"
	assert_eq "$before" "$(cat "$TDIR/wt/.git")" "the worktree's .git after attempt 1 wrote to it"
	as_caller sh -c 'printf "gitdir: %s\n" "$1" >wt/.git' sh "$TDIR/secret"
	VIA_DIR=$TDIR/wt via -- sh -c 'cat "$1/id_rsa"; touch "$2"' sh "$TDIR/secret" "$m"
	assert_refused "attempt 2 in a worktree whose .git names the caller's secret" "$m"
	assert_contains "git directories" "$ERR" "why attempt 2 was refused"
	[[ $OUT != *SECRET* ]] || fail "attempt 2 read the caller's secret"
	egretd_stop
}

# The same through the worktree's commondir (its .git untouched).
t_wt_commondir_redirect() {
	local m="$TDIR/marker" cd="$TDIR/clone/.git/worktrees/wt/commondir" before
	egretd_start
	wt_repos
	before=$(cat "$cd")
	VIA_DIR=$TDIR/wt via -- sh -c 'printf "%s\n" "$1" >"$2"; echo rc=$?' sh "$TDIR/secret" "$cd"
	assert_eq "$before" "$(cat "$cd")" "the worktree's commondir after attempt 1 wrote to it"
	as_caller sh -c 'printf "%s\n" "$1" >"$2"' sh "$TDIR/secret" "$cd"
	VIA_DIR=$TDIR/wt via -- sh -c 'cat "$1/id_rsa"; touch "$2"' sh "$TDIR/secret" "$m"
	assert_refused "attempt 2 in a worktree whose commondir names the caller's secret" "$m"
	assert_contains "commondir" "$ERR" "why attempt 2 was refused"
	[[ $OUT != *SECRET* ]] || fail "attempt 2 read the caller's secret"
	egretd_stop
}

# A plain clone: attempt 1 cannot move .git aside for a .git file of its
# own ("gitdir: .."); done by hand, attempt 2 is refused and never reads
# the clone's parent (where the secret is). A commondir planted in a
# clone's .git is refused too, by the view and by egret git.
t_wt_clone_pointer() {
	local m="$TDIR/marker"
	egretd_start
	wt_repos
	VIA_DIR=$TDIR/clone via -- sh -c 'mv .git .git-real && printf "gitdir: ..\n" >.git; echo "mv=$?"'
	[ -d "$TDIR/clone/.git" ] && [ ! -e "$TDIR/clone/.git-real" ] ||
		fail "attempt 1 moved the clone's .git aside $(said)"
	as_caller sh -c 'cd clone && mv .git .git-real && printf "gitdir: ..\n" >.git'
	VIA_DIR=$TDIR/clone via -- sh -c 'cat "$1/id_rsa"; touch "$2"' sh "$TDIR/secret" "$m"
	assert_refused "attempt 2 in a clone whose .git file names its parent" "$m"
	[[ $OUT != *SECRET* ]] || fail "attempt 2 read the caller's secret"
	as_caller sh -c 'cd clone && rm .git && mv .git-real .git'
	VIA_DIR=$TDIR/clone via -- sh -c 'printf "%s\n" "$1" >.git/commondir' sh "$TDIR/secret"
	assert_eq 0 "$RC" "attempt 1 writes a commondir into the clone's .git $(said)"
	VIA_DIR=$TDIR/clone via -- touch "$m"
	assert_refused "attempt 2 in a clone with a commondir" "$m"
	assert_contains "commondir" "$ERR" "why attempt 2 was refused"
	as_caller sh -c 'cd clone && "$1" git status' sh "$EGRET" >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_eq 125 "$RC" "egret git in a clone with a commondir $(said)"
	assert_contains "commondir" "$ERR" "why egret git refused"
	egretd_stop
}

# In the view, the configuration the miner's git runs is read-only and
# git's pointers cannot be moved, in a clone and in a worktree; the agent
# still commits, fetches and gcs there.
t_wt_git_metadata_readonly() {
	local d out
	egretd_start
	wt_repos
	# A submodule's git directory, as `git submodule add` leaves it.
	as_caller sh -c 'm=clone/.git/modules/lib/sub; mkdir -p "$m/objects" "$m/refs" &&
		echo "ref: refs/heads/main" >"$m/HEAD" && printf "[core]\n" >"$m/config"' ||
		fail "the submodule's git directory"
	for d in clone wt; do
		VIA_DIR=$TDIR/$d via -- sh -c '
			g=$(git rev-parse --git-dir); c=$(git rev-parse --git-common-dir)
			try() { if "$@" 2>/dev/null; then echo "wrote: $*"; fi; }
			try git config core.fsmonitor "touch /tmp/x"
			try sh -c "echo x >>\"$c/config\""
			try sh -c "echo x >\"$c/hooks/pre-commit\""
			try sh -c "echo x >\"$c/hooks/post-checkout\""
			try mv "$c/hooks" "$c/hooks.old"
			try sh -c "echo \"* filter=x\" >\"$c/info/attributes\""
			try mv "$c/info" "$c/info.old"
			try sh -c "echo x >\"$g/config.worktree\""
			try sh -c "echo x >\"$c/config.worktree\""
			try mv "$g" "$g.old"
			try sh -c "echo x >>\"$c/modules/lib/sub/config\""
			try sh -c "echo x >\"$c/modules/lib/sub/hooks/post-checkout\""
			try mv "$c/modules/lib/sub" "$c/modules/lib/sub.old"
			echo edit >>a; git add a
			git -c user.name=agent -c user.email=agent@x commit -qm agent && echo committed
			git fetch -q . +HEAD:refs/remotes/self/head && echo fetched
			git gc -q && echo gced'
		assert_eq 0 "$RC" "the attempt in the $d $(said)"
		assert_eq "" "$(grep '^wrote' <<<"$OUT")" "what the attempt in the $d could write"
		assert_eq "committed fetched gced" "$(grep -E '^(committed|fetched|gced)$' <<<"$OUT" | xargs)" \
			"the agent's git in the $d $(said)"
	done
	out=$(as_caller git -C wt log --format=%s -1) || fail "the caller's git log in wt"
	assert_eq agent "$out" "the worktree's last commit"
	egretd_stop
}

# After an attempt that plants every way it can into the miner's git, and
# a nested repository committed as a gitlink with a core.fsmonitor of its
# own (and, as earlier attempts could, the clone's config by hand),
# `egret git` status, diff, add, commit, log, show and push to the bare
# remote (and egret-client's status, diff, log) run none of them; the
# plain `git status` control runs them.
# A key egret git cannot undo (url.*.insteadOf), and an alias, refused.
t_wt_harvest() {
	local p="$TDIR/pwned" egc out args
	egretd_start
	wt_repos
	mkdir -m 1777 "$p"
	VIA_DIR=$TDIR/clone via -- sh -c 'p=$1
		git init -q nested && cd nested
		git config core.fsmonitor "touch $p/nested-fsmonitor; echo"
		echo n >n && git add n && git -c user.name=a -c user.email=a@x commit -qm n && cd ..
		git config core.fsmonitor "touch $p/fsmonitor" 2>/dev/null
		printf "#!/bin/sh\ntouch %s/hook\n" "$p" >.git/hooks/pre-commit 2>/dev/null
		printf "* filter=evil diff=evil\n" >.gitattributes
		mkdir -p tools && printf "#!/bin/sh\ntouch %s/hookspath\n" "$p" >tools/pre-commit
		chmod +x tools/pre-commit; echo planted' sh "$p"
	assert_eq 0 "$RC" "the planting attempt $(said)"
	# What earlier attempts could write: the clone's own configuration.
	as_caller sh -c 'cd clone && p=$1
		git config core.fsmonitor "touch $p/fsmonitor"
		git config core.hooksPath tools
		git config core.pager "sh -c \"touch $p/pager; cat\""
		git config core.sshCommand "sh -c \"touch $p/ssh\""
		git config alias.st "!touch $p/alias"
		git config filter.evil.clean "sh -c \"touch $p/clean; cat\""
		git config filter.evil.smudge "sh -c \"touch $p/smudge; cat\""
		git config diff.evil.textconv "sh -c \"touch $p/textconv; cat \\\"\\$1\\\"\" --"
		git config credential.helper "!touch $p/credential"
		git config remote.origin.receivepack "sh -c \"touch $p/receivepack\"; git-receive-pack"
		printf "#!/bin/sh\ntouch %s/hook\n" "$p" >.git/hooks/post-commit
		chmod +x .git/hooks/post-commit; echo more >>a' sh "$p" ||
		fail "the caller's planted configuration"
	as_caller true
	egc=(env -C "$TDIR/clone" HOME="$TDIR/home" "${AS_TEST_USER[@]}" "$EGRET")
	for args in "git status" "git diff" "git add -A" "git commit -qm harvested" \
		"git log -p -1" "git show --stat" "git push -q origin HEAD:main"; do
		# shellcheck disable=SC2086 # the words are the command's
		out=$("${egc[@]}" $args 2>&1) || fail "egret $args: $out"
	done
	# egret-client, all a miner's image has of egret's, harvests alike.
	for args in "git status" "git diff" "git log -p -1"; do
		# shellcheck disable=SC2086 # the words are the command's
		out=$(env -C "$TDIR/clone" HOME="$TDIR/home" "${AS_TEST_USER[@]}" \
			"$(dirname "$EGRET")/egret-client" $args 2>&1) || fail "egret-client $args: $out"
	done
	assert_eq "" "$(ls "$p")" "what egret git ran of what the worktree planted"
	out=$(git --git-dir="$TDIR/remote.git" log --format=%s -1 main) || fail "the remote's log"
	assert_eq harvested "$out" "the commit pushed to the bare remote"
	as_caller git -C clone status >/dev/null 2>&1
	assert_exists "$p/nested-fsmonitor" "control: plain git status ran the nested repository's fsmonitor"
	out=$("${egc[@]}" git st 2>&1) && fail "egret git st (an alias) ran: $out"
	assert_contains "not a command egret git runs" "$out" "why the alias was refused"
	as_caller git -C clone config url."file://$TDIR/elsewhere".insteadOf "file://$TDIR/remote.git"
	out=$("${egc[@]}" git status 2>&1)
	assert_eq 125 "$?" "egret git with url.*.insteadOf in the repository's configuration: $out"
	assert_contains "insteadof" "$out" "why egret git refused"
	egretd_stop
}

# Mounts land on the directories checked (view.c: onto their fds): 1000
# set-ups while a loop swaps a component of the start directory's path for
# a symlink to a decoy never put the caller's tree over the decoy. Each
# attempt runs with the caller's tree where it belongs, or is refused.
t_wt_swap_during_setup() {
	# Outside /tmp, which each attempt has a fresh one of.
	local sw=/run/egret-tests/sw-$BASHPID i n=1000 covered=0 refused=0 swapper out
	rm -rf "$sw"
	mkdir -p "$sw/x/ssl" "$sw/decoy/ssl"
	echo mine >"$sw/x/ssl/marker"
	echo decoy >"$sw/decoy/ssl/marker"
	chown -R "$TEST_UID:$TEST_GID" "$sw/x"
	ln -s decoy "$sw/link"
	"$HELPERS/redteam" exchange "$sw/x" "$sw/link" 600 >/dev/null 2>&1 &
	swapper=$!
	for ((i = 0; i < n; i++)); do
		out=$("$EGRET" run --policy none -q --view --user "$(own_uid 400)" --chdir "$sw/x/ssl" -- \
			cat "$sw/decoy/ssl/marker" 2>/dev/null)
		case $out in
		decoy) ;;
		mine) covered=$((covered + 1)) ;;
		*) refused=$((refused + 1)) ;;
		esac
	done
	kill "$swapper" 2>/dev/null
	wait "$swapper" 2>/dev/null
	rm -rf "$sw"
	note "$n set-ups: $refused refused or failed, $covered put the tree over the decoy"
	assert_eq 0 "$covered" "set-ups that mounted the caller's tree over the decoy"
	[ "$refused" -lt "$n" ] || fail "control: no set-up ran at all"
}
TEST_SLOW[t_wt_swap_during_setup]=600

# Nothing an attempt makes is writable by others, and nothing outside its
# own places is the attempt's to write: chmod to o+w is refused, no ACL is
# set, and a file made o+w under a umask COMMAND cleared itself still takes
# nothing from another caller's attempt (Landlock: writes only beneath the
# view's own places), nor does a spool root made world-writable. The
# control: that attempt reads what it cannot write.
t_wt_world_writable() {
	local a=/run/egret-tests/ww-$BASHPID
	# Outside /tmp, which each attempt has a fresh one of.
	rm -rf "$a"
	egretd_start "  - user: $TEST_USER
    allow: true
  - uid: $CALLER_B_UID
    allow: true"
	mkdir -p "$a/wt" "$a/spool" && chown "$TEST_UID:$TEST_GID" "$a/wt" && chmod 755 "$a" "$a/wt" &&
		chmod 1777 "$a/spool" || fail "make $a"
	VIA_DIR=$a/wt via -- sh -c '
		touch f; mkdir d
		chmod 666 f 2>/dev/null && echo "chmod 666 ok"
		chmod 777 d 2>/dev/null && echo "chmod 777 ok"
		chmod 1777 d 2>/dev/null && echo "chmod 1777 ok"
		python3 -c "import os; os.chmod(\"f\", 0o646)" 2>/dev/null && echo "python chmod ok"
		python3 -c "import os; os.setxattr(\"f\", \"system.posix_acl_access\", bytes.fromhex(\"0200000001000600ffffffff04000400ffffffff20000600ffffffff\"))" 2>/dev/null &&
			echo "acl ok"
		umask 0; echo "umask $(umask)"; touch g; mkdir e
		stat -c "%n %a" f d g e'
	assert_eq 0 "$RC" "caller A's attempt $(said)"
	assert_eq "" "$(grep ' ok$' <<<"$OUT")" "what made A's files writable by others"
	assert_contains "umask 0000" "$OUT" "the umask COMMAND set, read back"
	assert_eq "f 644 d 755 g 666 e 777" "$(grep -E '^[fdge] [0-9]+$' <<<"$OUT" | xargs)" \
		"the modes of A's attempt's files"
	via_b -- sh -c 'for f in f g; do echo b >>"$1/wt/$f" 2>/dev/null && echo "wrote $f"; done
		touch "$1/wt/d/new" 2>/dev/null && echo "made in d"
		touch "$1/wt/e/new" 2>/dev/null && echo "made in e"
		touch "$1/spool/new" 2>/dev/null && echo "made in spool"
		cat "$1/wt/g" >/dev/null && echo "read g"' sh "$a"
	assert_eq 0 "$RC" "caller B's attempt $(said)"
	assert_eq "read g" "$OUT" "what caller B's attempt did in A's tree and the spool"
	rm -rf "$a"
	egretd_stop
}

# The largest RUN the wire admits, raw, from a caller whose entry has
# allow, audit, cache and upload_limit (egretd's argv once overflowed its
# array by one slot: issue 39): refused with one line and 125, or served,
# never a crash (make sanitize runs this with ASan); egretd serves the
# next caller either way.
t_egretd_largest_request() {
	local kind
	mkdir -p "$TDIR/cache" && chown "$TEST_UID:$TEST_GID" "$TDIR/cache"
	egretd_start "  - user: $TEST_USER
    repos: ['*']
    allow: true
    audit: true
    cache: $TDIR/cache
    upload_limit: 1M"
	for kind in refused served; do
		timeout -k 5 120 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
			/usr/bin/python3 "$HERE/largest_run.py" "$EGRETD_SOCK" "$TDIR" "$kind" \
			</dev/null >"$TDIR/out" 2>"$TDIR/err"
		RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
		assert_eq 0 "$RC" "the largest request ($kind): an EXIT $(said)"
		case $kind in
		refused)
			assert_contains "EXIT 125" "$OUT" "the largest request refused"
			assert_eq 1 "$(wc -l <"$TDIR/err")" "the lines saying why $(said)" ;;
		served)
			assert_contains "EXIT 0" "$OUT" "the largest request served" ;;
		esac
	done
	via -- true
	assert_eq 0 "$RC" "the next caller $(said)"
	egretd_stop
}
