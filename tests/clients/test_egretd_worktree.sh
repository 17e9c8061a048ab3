# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016 # `A && B || fail` is meant (fail exits); $1 in single quotes is the inner shell's
# test_egretd_worktree.sh - the agent's whole job through egretd (issue
# 26), as a miner runs it: an unprivileged caller clones a repository
# (and adds a `git worktree`), then its agent, through egretd, installs
# with npm (install, then ci from the lock), pip (--user) and Go (a module
# from a proxy, into its module cache), builds, edits and commits, with
# the test world's registries (pkgs.test) allowed. Afterwards the caller
# owns everything on disk: it modifies, commits, gcs and deletes the
# whole tree, and no file of an attempt uid is left anywhere. Sourced by
# run.sh.

# egretd for this test, in the client namespace; sets CL_SOCK, CL_EGRETD.
cl_egretd_start() {
	local dir=/run/egretd-cl-$$ i
	mkdir -p "$dir" && chmod 755 "$dir"
	chown "$TEST_UID:$TEST_GID" "$TDIR"
	CL_SOCK=$dir/egret.sock
	CL_UIDS="$(own_uid 510)-$(own_uid 519)"
	cat >"$dir/egretd.yaml" <<CONF
version: 1
socket:
  path: $CL_SOCK
  group: $TEST_GID
attempts:
  uids: $CL_UIDS
  max: 4
  state_dir: $dir/state
callers:
  - user: $TEST_USER
    allow: true
CONF
	chmod 644 "$dir/egretd.yaml"
	"${WORLD_IN_CLIENT[@]}" "$(dirname "$EGRET")/egretd" --config "$dir/egretd.yaml" \
		>"$TDIR/egretd.log" 2>&1 &
	CL_EGRETD=$!
	for ((i = 0; i < 100; i++)); do
		"$PY" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])' "$CL_SOCK" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "egretd never listened: $(cat "$TDIR/egretd.log")"
}

# Stop it; the uids of its range its caller came to own go with it.
cl_egretd_stop() {
	local u
	kill -TERM "$CL_EGRETD" 2>/dev/null
	wait "$CL_EGRETD" 2>/dev/null
	for ((u = $(own_uid 510); u <= $(own_uid 519); u++)); do
		rm -f "/run/egret-uids/owner-$u"
	done
	rm -rf "$(dirname "$CL_SOCK")"
}

# cl_via DIR ARGS...: as the caller, in DIR, with the world's resolver in
# its /etc/resolv.conf (egretd takes a caller's upstreams from there):
# `egret run --via ... ARGS`. Sets RC, OUT, ERR.
cl_via() {
	local dir=$1
	shift
	echo "nameserver $WORLD_DNS" >"$TDIR/resolv.conf"
	timeout -k 5 "$CLIENT_TIMEOUT" "${WORLD_IN_CLIENT[@]}" unshare --mount sh -c \
		'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$TDIR/resolv.conf" \
		"${AS_TEST_USER[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" \
		"$EGRET" run --via "$CL_SOCK" "$@" >"$TDIR/out" 2>"$TDIR/err"
	RC=$?
	OUT=$(cat "$TDIR/out")
	ERR=$(cat "$TDIR/err")
}

# Two attempts, each an npm install and ci, a pip install and a go build:
# on a busy machine more than the runner's 120 s backstop.
TEST_SLOW[t_client_egretd_worktree]=600
t_client_egretd_worktree() {
	local d uid uids="" out
	cl_egretd_start
	"${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" sh -c 'set -e; cd "$1"
		git clone -q "http://$2/git/hello.git" clone; git -C clone worktree add -q ../wt' \
		sh "$TDIR" "$GIT4" || fail "the caller's clone (outside egret) and worktree"
	for d in clone wt; do
		cl_via "$TDIR/$d" --allow pkgs.test:80 --clean-env -- sh -c "$(cat "$HERE/agent-job.sh")"
		assert_eq 0 "$RC" "the agent's job in the caller's $d $(said)"
		out=$OUT
		assert_eq "home: fresh" "$(sed -n 1p <<<"$out")" "HOME at the start of an attempt ($d)"
		assert_eq "npm: egret-hello-npm" "$(sed -n 2p <<<"$out")" "npm install, then npm ci ($d)"
		assert_eq "pip: egret-hello-wheel" "$(sed -n 3p <<<"$out")" "pip install --user ($d)"
		assert_eq "go: egret-hello-go" "$(sed -n 4p <<<"$out")" "go build with a module ($d)"
		assert_eq "uncommitted: 0" "$(sed -n 5p <<<"$out")" "git add and commit ($d)"
		uid=$(sed -n 6p <<<"$out")
		uid=${uid#uid: }
		uids="$uids $uid"
		assert_eq "$TEST_UID" "$(stat -c %u "$TDIR/$d/src/deep/file")" "the owner on disk of the agent's file ($d)"
		assert_eq "$TEST_UID" "$(stat -c %u "$TDIR/$d/node_modules/egret-hello/index.js")" \
			"the owner on disk of what npm installed ($d)"
		"${AS_TEST_USER[@]}" sh -c 'set -e; cd "$1"; echo caller >>src/deep/file
			git -c user.name=c -c user.email=c@x commit -qam "the caller"; git gc -q
			git reset -q --hard HEAD~1' sh "$TDIR/$d" ||
			fail "the caller modifies, commits, gcs and resets the agent's work ($d)"
	done
	for uid in $uids; do
		assert_eq "" "$(find "$TDIR" /tmp /var/tmp /dev/shm /run/lock -xdev -uid "$uid" 2>/dev/null | head -3)" \
			"files of attempt uid $uid"
	done
	"${AS_TEST_USER[@]}" rm -rf "$TDIR/clone" "$TDIR/wt" || fail "the caller deletes the whole tree"
	assert_absent "$TDIR/clone" "the clone, after the caller deleted it"
	cl_egretd_stop
}
