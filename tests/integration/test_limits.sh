# shellcheck shell=bash
# test_limits.sh - the limits manifest inside an attempt (issue 43;
# attempt/limits.h): sourced by run.sh.

# limits_probe: COMMAND's side. Copies the manifest out, then tries to
# change it every way a file's user could: write, append, truncate,
# remove, rename over it, chmod, a symlink in its place - and list the
# other attempts' manifests; prints one line per try, "ok" where it
# succeeded, then the manifest's directory.
limits_probe() {
	write_script limits_probe.sh <<'EOF'
out=$1
[ -n "$EGRET_LIMITS" ] && [ -n "$EGRET_LIMITS_JSON" ] || { echo "no EGRET_LIMITS"; exit 3; }
cp "$EGRET_LIMITS" "$out/limits.txt" && cp "$EGRET_LIMITS_JSON" "$out/limits.json" || exit 4
dir=$(dirname "$EGRET_LIMITS")
try() { if "$@" 2>/dev/null; then echo "ok $*"; else echo "refused"; fi; }
try sh -c ': >"$1"' - "$EGRET_LIMITS"
try sh -c 'echo x >>"$1"' - "$EGRET_LIMITS_JSON"
try rm -f "$EGRET_LIMITS"
try mv -f "$EGRET_LIMITS_JSON" "$dir/x"
try sh -c 'echo {} >"$1/y" && mv -f "$1/y" "$2"' - "$dir" "$EGRET_LIMITS_JSON"
try chmod 666 "$EGRET_LIMITS"
try ln -sf /etc/hostname "$dir/limits.txt"
try ls "$(dirname "$dir")"
echo "$dir"
EOF
}

# The manifest: named in COMMAND's environment, the policy in force as
# `egret check --json` prints it for the same policy and repository, how a
# refusal looks, and COMMAND (not root) can change none of it; it leaves
# with the attempt.
t_limits_manifest() {
	local policy probe check dir
	policy=$(policy_path limits.yaml)
	cat >"$policy" <<'EOF'
version: 1
hosts: ["github.com:443"]
cidrs: ["203.0.113.10/32:9000"]
repos:
  owner/app:
    hosts: ["registry.npmjs.org:443"]
EOF
	probe=$(limits_probe)
	attempt --user "$TEST_USER" --policy "$policy" --repo owner/app --state-dir "$TDIR/state" \
		--dns-upstream "$WORLD_DNS" -- sh "$probe" "$TDIR"
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_eq "refused refused refused refused refused refused refused refused" \
		"$(sed -n 1,8p <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')" \
		"COMMAND's tries to change the manifest $(said)"
	dir=$(sed -n 9p <<<"$OUT")
	[[ $dir == /run/egret-limits/* ]] || fail "the manifest's directory: '$dir' $(said)"
	[ ! -e "$dir" ] || fail "the manifest $dir outlived its attempt"
	check=$("$EGRET" check --policy "$policy" --repo owner/app --json) || fail "egret check"
	assert_eq "$(jq -S . <<<"$check")" "$(jq -S .policy "$TDIR/limits.json")" \
		"the manifest's policy against egret check --json"
	assert_eq '"owner/app" "ECONNREFUSED" true' \
		"$(jq -c '.repo, .refusals.address, .requests' "$TDIR/limits.json" | tr '\n' ' ' | sed 's/ $//')" \
		"the manifest's repository, refusal and requests"
	if ! grep -qx '  registry.npmjs.org, ports 443' "$TDIR/limits.txt" ||
		! grep -qx '  203.0.113.10, ports 9000' "$TDIR/limits.txt" ||
		! grep -q 'fail with ECONNREFUSED' "$TDIR/limits.txt"; then
		fail "the plain-text manifest: $(cat "$TDIR/limits.txt")"
	fi
}

# Through egretd the same: COMMAND (an attempt uid) reads its manifest and
# changes none of it.
t_limits_egretd() {
	local probe dir
	egretd_start
	probe=$(limits_probe)
	via --allow 203.0.113.10:9000 -- sh "$probe" "$TDIR"
	assert_eq 0 "$RC" "through egretd $(said)"
	assert_eq "refused refused refused refused refused refused refused refused" \
		"$(sed -n 1,8p <<<"$OUT" | tr '\n' ' ' | sed 's/ $//')" \
		"COMMAND's tries to change the manifest through egretd $(said)"
	dir=$(sed -n 9p <<<"$OUT")
	assert_eq '"203.0.113.10"' "$(jq -c '.policy.cidrs[0].cidr' "$TDIR/limits.json")" \
		"the manifest's address rule through egretd"
	[ ! -e "$dir" ] || fail "the manifest $dir outlived its attempt through egretd"
	egretd_stop
}
