# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016 # `A && B || fail` is meant (fail exits); $1 in single quotes is the inner shell's
# test_agents_ready.sh - what a real agent needs of an attempt (issue 40):
# through egretd what the caller legitimately knows passes (-q, -v,
# --timeout; --git-remote and --nested-sandbox where its entry allows), a
# HOME filled from the caller's template and never written back, an
# agent's own sandbox nested in the attempt with every egret rule still
# holding there, and --timeout with the denial it kept hitting. Sourced by
# run.sh after test_egretd.sh (egretd_start, via, VIA_DIR).

# via_named ARGS...: via, with the caller's resolver the world's (a mount
# namespace of its own, as a container has), so names resolve.
via_named() {
	echo "nameserver $WORLD_DNS" >"$TDIR/named.resolv"
	timeout -k 5 90 "${WORLD_IN_CLIENT[@]}" unshare --mount sh -c \
		'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$TDIR/named.resolv" \
		"${AS_TEST_USER[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "${VIA_DIR:-$TDIR}" \
		"$EGRET" run --via "$EGRETD_SOCK" "$@" >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
}

# Through egretd: -q silences the summary, -v adds to it, --timeout ends
# COMMAND; --git-remote is refused without the caller's git_remote, taken
# with it (its host reachable by name, an unlisted host refused).
t_egretd_pass_through() {
	local m="$TDIR/marker" tok
	egretd_start "  - user: $TEST_USER
    allow: true"
	via -- true
	assert_contains "connections/datagrams" "$ERR" "the summary, by default"
	via -q -- true
	assert_eq "0 " "$RC $ERR" "-q through egretd: no summary"
	via -v -- true
	[ "$(wc -l <<<"$ERR")" -gt 1 ] && assert_contains "connections/datagrams" "$ERR" "-v: the summary" ||
		fail "-v through egretd said no more than the summary $(said)"
	via --timeout 1s -- sleep 30
	assert_eq 124 "$RC" "--timeout through egretd $(said)"
	via --git-remote https://github.com/octo/app.git -- touch "$m"
	assert_refused "--git-remote from a caller without git_remote" "$m"
	assert_contains "callers.git_remote" "$ERR" "why --git-remote was refused"
	egretd_stop
	egretd_start "  - user: $TEST_USER
    git_remote: [github.com]"
	tok=$(token remote)
	via_named --git-remote https://github.com/octo/app.git -- "$P" tcp-name github.com 443 "$tok" 4
	assert_eq 0 "$RC" "the caller's own remote's host $(said)"
	world_sink_wait "$tok" "$WORLD_LOG" || fail "the remote's host never got $tok"
	via --git-remote https://gitlab.com/octo/app.git -- touch "$m"
	assert_refused "--git-remote on a host the caller's entry does not list" "$m"
	assert_contains "not one of this caller's" "$ERR" "why"
	egretd_stop
}

# A HOME filled from the caller's template (egretd.yaml: home), outside
# /tmp; what the attempt writes there is gone, and the template unchanged;
# a template entry that is not the caller's refuses the attempt.
t_egretd_home_template() {
	local tpl="$TDIR/tpl" m="$TDIR/marker"
	mkdir -p "$tpl/.codex" && echo 'model = "mock"' >"$tpl/.codex/config.toml" &&
		echo '{"hasCompletedOnboarding":true}' >"$tpl/.claude.json" &&
		ln -s .claude.json "$tpl/link" && chown -R "$TEST_UID:$TEST_GID" "$tpl" ||
		fail "the template"
	egretd_start "  - user: $TEST_USER
    home: $tpl"
	via -- sh -c 'echo "$HOME"; cat "$HOME/.codex/config.toml" "$HOME/link"
		echo planted >"$HOME/.claude.json"; touch "$HOME/new"; stat -c %U "$HOME/.claude.json"'
	assert_eq 0 "$RC" "an attempt with the home template $(said)"
	assert_eq "/run/egret-home" "$(sed -n 1p <<<"$OUT")" "COMMAND's HOME"
	assert_eq 'model = "mock"' "$(sed -n 2p <<<"$OUT")" "the template's config, in HOME"
	assert_eq '{"hasCompletedOnboarding":true}' "$(sed -n 3p <<<"$OUT")" "a symlink of the template, in HOME"
	[ "$(sed -n 4p <<<"$OUT")" != "$TEST_USER" ] || fail "HOME's files are the caller's, not the attempt's"
	assert_eq '{"hasCompletedOnboarding":true}' "$(cat "$tpl/.claude.json")" "the template after an attempt wrote HOME"
	assert_absent "$tpl/new" "what the attempt made in HOME, in the template"
	via -- sh -c 'cat "$HOME/.claude.json"; test -e "$HOME/new" && echo leaked'
	assert_eq '{"hasCompletedOnboarding":true}' "$OUT" "the next attempt's HOME"
	touch "$tpl/roots"
	via -- touch "$m"
	assert_eq 125 "$RC" "a template with a file of root's $(said)"
	assert_absent "$m" "COMMAND ran with a template holding a file of root's"
	assert_contains "home template" "$ERR" "why"
	egretd_stop
}

# An agent's own sandbox (bubblewrap) inside the attempt: refused without
# --nested-sandbox; with it, bwrap runs, and inside it a denied
# destination is still refused with nothing at the far side, an allowed
# one passes, the view's read-only git configuration cannot be unmounted
# or written, and a new network namespace reaches nothing. Through egretd
# only where the caller's entry allows it; by the policy, per repository.
t_nested_sandbox() {
	local ok deny script m="$TDIR/marker"
	command -v bwrap >/dev/null || fail "bwrap is missing (tools/install-deps.sh installs bubblewrap)"
	ok=$(token ok) deny=$(token deny)
	mkdir -p "$TDIR/wt" && chown "$TEST_UID:$TEST_GID" "$TDIR/wt"
	"${AS_TEST_USER[@]}" sh -c 'cd "$1" && git init -q . && git -c user.name=a -c user.email=a@x \
		commit -q --allow-empty -m i' sh "$TDIR/wt" || fail "the worktree's repository"
	# In the worktree: the view's /tmp is a fresh one.
	script=$TDIR/wt/nested.sh
	cat >"$script" <<'SH'
P=$1
echo "allowed: $("$P" tcp 203.0.113.10 80 "$2")"
echo "denied: $("$P" tcp 203.0.113.11 80 "$3")"
mkdir -p sub && mount -t tmpfs t sub 2>/dev/null && echo "control: mounted" && umount sub
umount .git/config 2>/dev/null && echo "umounted config"
umount -l .git 2>/dev/null && echo "umounted .git"
echo x >>.git/config 2>/dev/null && echo "wrote config"
unshare -n "$P" tcp 203.0.113.10 80 "$2-netns" >/dev/null 2>&1 && echo "new netns reached the world"
exit 0
SH
	attempt --view --user "$(own_uid 450)" --chdir "$TDIR/wt" --allow 203.0.113.10:80 -- \
		bwrap --dev-bind / / true
	[ "$RC" != 0 ] || fail "control: bwrap ran without --nested-sandbox $(said)"
	attempt --view --user "$(own_uid 450)" --chdir "$TDIR/wt" --allow 203.0.113.10:80 \
		--nested-sandbox -- bwrap --dev-bind / / --unshare-user --unshare-pid \
		--cap-add ALL --uid 0 --gid 0 sh "$script" "$P" "$ok" "$deny"
	assert_eq 0 "$RC" "the nested sandbox $(said)"
	assert_contains "allowed: ok" "$OUT" "an allowed flow from inside the nested sandbox"
	assert_contains "denied: $REFUSED" "$OUT" "a denied flow from inside the nested sandbox"
	assert_contains "control: mounted" "$OUT" "control: the nested sandbox holds the rights it tried with"
	assert_eq "" "$(grep -E '^(umounted|wrote|new netns)' <<<"$OUT")" \
		"what the nested sandbox undid of egret's"
	world_sink_wait "$ok" "$WORLD_LOG" || fail "the allowed flow never arrived"
	world_barrier tcp 203.0.113.11 80 "$(token barrier)" "$WORLD_LOG" || fail "barrier"
	! world_sink_has "$deny" "$WORLD_LOG" || fail "denied, yet the world got $deny"
	# The operator's policy may say it per repository (nested_sandbox:).
	printf 'version: 1\nrepos:\n  acme/nest:\n    nested_sandbox: true\n' >"$(policy_path nest.yaml)"
	attempt_bare --policy "$(policy_path nest.yaml)" --repo acme/nest --user "$(own_uid 451)" -- \
		bwrap --dev-bind / / true
	assert_eq 0 "$RC" "bwrap in acme/nest, whose section says nested_sandbox: true $(said)"
	attempt_bare --policy "$(policy_path nest.yaml)" --repo acme/other --user "$(own_uid 451)" -- \
		bwrap --dev-bind / / true
	[ "$RC" != 0 ] || fail "bwrap in a repository whose section does not say so $(said)"
	# Through egretd (which makes TDIR the caller's: last).
	egretd_start
	via --nested-sandbox -- touch "$m"
	assert_refused "--nested-sandbox from a caller without nested_sandbox" "$m"
	assert_contains "callers.nested_sandbox" "$ERR" "why"
	egretd_stop
}

# --timeout on a COMMAND that keeps asking for a denied name: ended with
# everything it started, 124, and the summary names what it kept trying;
# while it ran, a line said so.
t_timeout_denied_name() {
	local script start end
	script=$(write_script retry.sh <<'SH'
sleep 300 &
while :; do getent hosts denied.test >/dev/null; sleep 0.2; done
SH
)
	start=$(date +%s)
	attempt --user "$TEST_USER" --dns-upstream "$WORLD_DNS" --timeout 5s -- sh "$script"
	end=$(date +%s)
	assert_eq 124 "$RC" "a COMMAND past --timeout $(said)"
	[ $((end - start)) -ge 5 ] && [ $((end - start)) -lt 60 ] ||
		fail "--timeout 5s ended COMMAND after $((end - start)) s"
	assert_contains "ran past --timeout (5 s)" "$ERR" "the timeout line"
	assert_contains "it kept trying the name denied.test" "$ERR" "the name it kept asking for"
	assert_contains "keeps trying the name denied.test" "$ERR" "the live line while it ran"
	[ -z "$(pgrep -u "$TEST_UID" -f 'sleep 300')" ] || fail "what COMMAND started outlived the timeout"
}
