# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016,SC2034
# test_policy.sh - the operator's policy (docs/POLICY.md): the built-in
# default, per-repository sections, the git remote, the trust boundary
# (what the checkout and the environment cannot change, who may write the
# policy), strict validation and `egret check`.
#
# Sourced by run.sh after test_dns.sh, whose dns_script, got, assert_landed
# and assert_not_landed these tests use. Names are the world's (catalog hosts
# on addresses of their own, tests/world/world.sh):
#   github.com 203.0.113.10 / 2001:db8:2::10   codeload.github.com 203.0.113.23
#   deb.debian.org 203.0.113.20   security.debian.org 203.0.113.21
#   archive.ubuntu.com 203.0.113.22   pypi.org 203.0.113.24
#   registry.npmjs.org 203.0.113.11 (evil.test shares it)
#   registry.evil.test 203.0.113.25 (no policy names it)
#
# Evidence as in test_dns.sh: the probe's errno or getaddrinfo code and dig's
# status inside the attempt, the world sink's log (allowed flows land at the
# expected address; denied tokens never land, checked after a barrier), and
# the world's DNS log (a denied name never reaches it: the count for the
# name is unchanged after a DNS barrier - counts are compared with a
# snapshot, since other tests ask for some of these names too).
#
# Every attempt passes --dns-upstream (DNS, from test_dns.sh): the built-in
# default policy has no upstreams, and the host's /etc/resolv.conf is not
# the world.

# --- helpers ----------------------------------------------------------------

# The built-in default policy applies on this machine: `egret check --json`
# without --policy says "builtin":true, i.e. /etc/egret/policy.yaml does
# not exist. Fails the test (never skips) if it does: the operator's file
# would decide what the attempt reaches, and CI machines must not have one.
require_builtin_default() {
	local out rc
	out=$("$EGRET" check --json 2>&1)
	rc=$?
	[ "$rc" = 0 ] && [[ $out == *'"builtin":true'* ]] ||
		fail "the built-in default policy does not apply here: this machine has" \
			"/etc/egret/policy.yaml (it must not exist in CI; move it away to run" \
			"this test). egret check --json: rc=$rc $out"
}

# The count of queries for NAME that reached the world's DNS is still N0,
# after a barrier proved the log caught up.
assert_dns_not_asked_since() {	# NAME N0 WHAT
	world_dns_barrier "$(token b)" || fail "DNS barrier did not show up in the query log"
	assert_eq "$2" "$(world_dns_count "$1")" "$3: queries for $1 that reached the world's DNS (before: $2)"
}

# NAME was asked of the world's DNS since the count was N0.
assert_dns_asked_since() {	# NAME N0 WHAT
	[ "$(world_dns_count "$1")" -gt "$2" ] ||
		fail "$3: no query for $1 reached the world's DNS: egret did not forward it"
}

# The probe's result for KEY was ok and its token landed at DEST.
assert_reached() {	# KEY TOKEN DEST WHAT
	assert_eq ok "$(got "$1")" "$4 $(said)"
	assert_landed "$2" "$3" "$4"
}

# The probe's connect for KEY was refused ($REFUSED) and its token never landed.
assert_conn_refused() {	# KEY TOKEN ADDR PORT WHAT
	assert_eq "$REFUSED" "$(got "$1")" "$5 $(said)"
	assert_not_landed "$2" tcp "$3" "$4" "$5"
}

# The JSON object of host NAME in `egret check --json` output $1, or nothing.
# (Host objects hold no braces: "ports" is a list of numbers and strings.)
json_host() {	# JSON NAME
	grep -o '{"name":"[^"]*"[^}]*}' <<<"$1" | grep -F "{\"name\":\"$2\"," | head -n 1
}

# A valid policy that allows what no test may reach unless egret read it.
PLANTED_POLICY='version: 1
hosts: [evil.test, registry.evil.test, "github.com:80"]
ecosystems: [npm]
cidrs: ["203.0.113.0/24"]
repos:
  owner/a:
    hosts: [evil.test, registry.evil.test]
'

# --- 1. the ratified default ------------------------------------------------

# No policy file: the built-in default (Debian and Ubuntu registries, the
# git remote) with --git-remote https://github.com/owner/a.git. The
# registries are reachable on 80 and 443, github.com on 443 only (https),
# its forge companion codeload.github.com on 443; nothing else - npm, PyPI
# and an unknown registry get NXDOMAIN (never asked of the world's DNS) and
# their addresses stay EPERM. egret says once that the default applies.
t_policy_builtin_default() {
	local tok script out n name
	local -A n0
	require_builtin_default
	out=$("$EGRET" check --json --git-remote https://github.com/owner/a.git 2>&1)
	for name in deb.debian.org security.debian.org archive.ubuntu.com; do
		[[ $(json_host "$out" "$name") == *'"ports":['@(80,443|443,80)']'* ]] ||
			fail "egret check (built-in default): want $name on [80,443]: $out"
	done
	[[ $(json_host "$out" github.com) == *'"ports":[443],"from":"git_remote"'* ]] ||
		fail "egret check (built-in default): want github.com [443] from git_remote: $out"
	[ -z "$(json_host "$out" registry.npmjs.org)" ] ||
		fail "egret check (built-in default) lists registry.npmjs.org: $out"

	tok=$(token def)
	for name in deb.debian.org security.debian.org archive.ubuntu.com github.com \
		codeload.github.com registry.npmjs.org pypi.org registry.evil.test evil.test; do
		n0[$name]=$(world_dns_count "$name")
	done
	script=$(dns_script cmd.sh <<'EOF'
for n in deb.debian.org security.debian.org archive.ubuntu.com github.com \
	codeload.github.com registry.npmjs.org pypi.org registry.evil.test evil.test; do
	echo "dig $n: $(dstatus $n)"
done
echo "deb-80: $("$P" tcp-name deb.debian.org 80 "$T-deb-80" 4)"
echo "deb-443: $(PROBE_SNI=deb.debian.org "$P" tcp 203.0.113.20 443 "$T-deb-443")"
echo "deb-8080: $("$P" tcp 203.0.113.20 8080 "$T-deb-8080")"
echo "secdeb-80: $("$P" tcp-name security.debian.org 80 "$T-secdeb-80" 4)"
echo "ubuntu-80: $("$P" tcp-name archive.ubuntu.com 80 "$T-ubuntu-80" 4)"
echo "ubuntu-443: $(PROBE_SNI=archive.ubuntu.com "$P" tcp 203.0.113.22 443 "$T-ubuntu-443")"
echo "gh-443: $("$P" tcp-name github.com 443 "$T-gh-443" 4)"
echo "gh6-443: $("$P" tcp-name github.com 443 "$T-gh6-443" 6)"
echo "gh-80: $("$P" tcp 203.0.113.10 80 "$T-gh-80")"
echo "gh6-80: $("$P" tcp 2001:db8:2::10 80 "$T-gh6-80")"
echo "gh-22: $("$P" tcp 203.0.113.10 22 "$T-gh-22")"
echo "codeload-443: $("$P" tcp-name codeload.github.com 443 "$T-codeload-443" 4)"
echo "codeload-80: $("$P" tcp 203.0.113.23 80 "$T-codeload-80")"
echo "npm-name: $("$P" tcp-name registry.npmjs.org 443 "$T-npm-name")"
echo "npm-443: $("$P" tcp 203.0.113.11 443 "$T-npm-443")"
echo "pypi-443: $("$P" tcp 203.0.113.24 443 "$T-pypi-443")"
echo "evilreg-443: $("$P" tcp 203.0.113.25 443 "$T-evilreg-443")"
echo "bare-80: $("$P" tcp 198.51.100.7 80 "$T-bare-80")"
EOF
)
	attempt_bare --user "$TEST_USER" "${DNS[@]}" --git-remote https://github.com/owner/a.git \
		-- sh "$script" "$P" "$tok" "$TDIR"
	assert_eq 0 "$RC" "egret exit status (no --policy, no /etc/egret/policy.yaml) $(said)"
	# Said once, without -v: it opens hosts nobody wrote down.
	n=$(grep -c 'built-in default policy' "$TDIR/err")
	assert_eq 1 "$n" "lines of egret's stderr about the built-in default policy, without -v $(said)"
	for name in deb.debian.org security.debian.org archive.ubuntu.com github.com \
		codeload.github.com; do
		assert_eq NOERROR "$(got "dig $name")" "dig $name (built-in default) $(said)"
	done
	for name in registry.npmjs.org pypi.org registry.evil.test evil.test; do
		assert_eq NXDOMAIN "$(got "dig $name")" "dig $name (built-in default) $(said)"
	done
	assert_reached deb-80 "$tok-deb-80" 203.0.113.20:80 "deb.debian.org:80"
	assert_reached deb-443 "$tok-deb-443" 203.0.113.20:443 "deb.debian.org:443"
	assert_reached secdeb-80 "$tok-secdeb-80" 203.0.113.21:80 "security.debian.org:80"
	assert_reached ubuntu-80 "$tok-ubuntu-80" 203.0.113.22:80 "archive.ubuntu.com:80"
	assert_reached ubuntu-443 "$tok-ubuntu-443" 203.0.113.22:443 "archive.ubuntu.com:443"
	assert_reached gh-443 "$tok-gh-443" 203.0.113.10:443 "github.com:443 (https remote)"
	assert_reached gh6-443 "$tok-gh6-443" "[2001:db8:2::10]:443" "github.com:443 over IPv6"
	assert_reached codeload-443 "$tok-codeload-443" 203.0.113.23:443 \
		"codeload.github.com:443 (forge companion)"
	assert_eq "err EAI_NONAME" "$(got npm-name)" "getaddrinfo registry.npmjs.org $(said)"
	assert_conn_refused deb-8080 "$tok-deb-8080" 203.0.113.20 8080 "deb.debian.org:8080 (catalog: 80, 443)"
	assert_conn_refused gh-80 "$tok-gh-80" 203.0.113.10 80 "github.com:80 (https remote: 443 only)"
	assert_conn_refused gh6-80 "$tok-gh6-80" 2001:db8:2::10 80 "github.com:80 over IPv6"
	assert_conn_refused gh-22 "$tok-gh-22" 203.0.113.10 22 "github.com:22 (https remote: 443 only)"
	assert_conn_refused codeload-80 "$tok-codeload-80" 203.0.113.23 80 "codeload.github.com:80 (companions: 443)"
	assert_conn_refused npm-443 "$tok-npm-443" 203.0.113.11 443 "registry.npmjs.org's address"
	assert_conn_refused pypi-443 "$tok-pypi-443" 203.0.113.24 443 "pypi.org's address"
	assert_conn_refused evilreg-443 "$tok-evilreg-443" 203.0.113.25 443 "registry.evil.test's address"
	assert_conn_refused bare-80 "$tok-bare-80" 198.51.100.7 80 "an address no name gave"
	for name in deb.debian.org security.debian.org archive.ubuntu.com github.com \
		codeload.github.com; do
		assert_dns_asked_since "$name" "${n0[$name]}" "built-in default"
	done
	for name in registry.npmjs.org pypi.org registry.evil.test evil.test; do
		assert_dns_not_asked_since "$name" "${n0[$name]}" "built-in default"
	done
}

# --- 2. per-repository sections ---------------------------------------------

# One policy, `repos: {owner/a: {ecosystems: [npm]}}` over a top level of
# [debian]. Two attempts at the same time: --repo owner/a reaches
# registry.npmjs.org:443 (not :80: the catalog says 443); --repo owner/b
# (no section: the top level alone) gets NXDOMAIN for it and EPERM for its
# address - while owner/a's attempt holds that address learned - and still
# reaches the top level's deb.debian.org.
t_policy_per_repo() {
	local tok script policy pa pb n1 d0
	tok=$(token repo)
	policy=$(policy_path policy.yaml)
	cat >"$policy" <<'EOF'
version: 1
os_registries: [debian]
repos:
  owner/a:
    ecosystems: [npm]
EOF
	d0=$(world_dns_count deb.debian.org)
	script=$(dns_script cmd.sh <<'EOF'
n=$4
if [ "$n" = a ]; then
	echo "npm: $(dstatus registry.npmjs.org)"
	echo "npm-443: $(PROBE_SNI=registry.npmjs.org "$P" tcp 203.0.113.11 443 "$T-a-npm-443")"
	echo "npm-80: $("$P" tcp 203.0.113.11 80 "$T-a-npm-80")"
	echo "deb-80: $("$P" tcp-name deb.debian.org 80 "$T-a-deb-80" 4)"
	touch "$D/a.done"
	wait_file "$D/b.done"		# still running while b tries
else
	wait_file "$D/go-b"		# the test's DNS snapshot is taken
	echo "npm: $(dstatus registry.npmjs.org)"
	echo "npm-name: $("$P" tcp-name registry.npmjs.org 443 "$T-b-npm-name")"
	echo "npm-443: $("$P" tcp 203.0.113.11 443 "$T-b-npm-443")"
	echo "deb-80: $("$P" tcp-name deb.debian.org 80 "$T-b-deb-80" 4)"
	touch "$D/b.done"
fi
EOF
)
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy "$policy" --repo owner/a \
		--user "$(own_uid 3)" "${DNS[@]}" -- sh "$script" "$P" "$tok" "$TDIR" a \
		>"$TDIR/a.out" 2>"$TDIR/a.err" &
	pa=$!
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy "$policy" --repo owner/b \
		--user "$(own_uid 4)" "${DNS[@]}" -- sh "$script" "$P" "$tok" "$TDIR" b \
		>"$TDIR/b.out" 2>"$TDIR/b.err" &
	pb=$!
	wait_until 30 test -e "$TDIR/a.done" ||
		fail "owner/a's attempt never got through its steps ($(cat "$TDIR/a.out" "$TDIR/a.err"))"
	# Everything owner/a asked is in the log now; what comes later is b's.
	world_dns_barrier "$(token b)" || fail "DNS barrier"
	n1=$(world_dns_count registry.npmjs.org)
	touch "$TDIR/go-b"
	reap "$pa" 40
	assert_eq 0 "$REAPED" "egret --repo owner/a exit status ($(cat "$TDIR/a.out" "$TDIR/a.err"))"
	reap "$pb" 40
	assert_eq 0 "$REAPED" "egret --repo owner/b exit status ($(cat "$TDIR/b.out" "$TDIR/b.err"))"
	assert_eq NOERROR "$(got npm "$TDIR/a.out")" "owner/a: dig registry.npmjs.org"
	assert_eq ok "$(got npm-443 "$TDIR/a.out")" "owner/a: registry.npmjs.org:443"
	assert_landed "$tok-a-npm-443" 203.0.113.11:443 "owner/a: registry.npmjs.org:443"
	assert_eq "$REFUSED" "$(got npm-80 "$TDIR/a.out")" "owner/a: registry.npmjs.org:80 (npm: 443)"
	assert_not_landed "$tok-a-npm-80" tcp 203.0.113.11 80 "owner/a: registry.npmjs.org:80"
	assert_eq ok "$(got deb-80 "$TDIR/a.out")" "owner/a: deb.debian.org:80 (top level)"
	assert_landed "$tok-a-deb-80" 203.0.113.20:80 "owner/a: deb.debian.org:80"
	[ "$n1" -gt 0 ] || fail "owner/a's query for registry.npmjs.org never reached the world's DNS"
	assert_eq NXDOMAIN "$(got npm "$TDIR/b.out")" \
		"owner/b (no section): dig registry.npmjs.org, while owner/a runs with it allowed"
	assert_eq "err EAI_NONAME" "$(got npm-name "$TDIR/b.out")" \
		"owner/b: getaddrinfo registry.npmjs.org"
	assert_eq "$REFUSED" "$(got npm-443 "$TDIR/b.out")" \
		"owner/b: registry.npmjs.org's address:443, learned by owner/a's attempt at the same time"
	assert_not_landed "$tok-b-npm-443" tcp 203.0.113.11 443 "owner/b: registry.npmjs.org:443"
	assert_dns_not_asked_since registry.npmjs.org "$n1" "owner/b"
	assert_eq ok "$(got deb-80 "$TDIR/b.out")" "owner/b: deb.debian.org:80 (the top level applies)"
	assert_landed "$tok-b-deb-80" 203.0.113.20:80 "owner/b: deb.debian.org:80"
	assert_dns_asked_since deb.debian.org "$d0" "owner/a and owner/b"
}

# --- 3. the target repository cannot widen its own allowlist -----------------

# COMMAND runs in a checkout holding policy files, under every name an
# enforcer might look for, that egret WOULD accept (root-owned, valid, shown
# with egret check) and that allow evil.test, registry.evil.test, npm and
# all of 203.0.113.0/24; egret's environment (inherited by COMMAND) sets
# EGRET_POLICY, EGRET_ALLOW and friends. With the built-in default and with
# an operator policy, nothing changes: NXDOMAIN, EPERM, nothing in the DNS
# log or the sink. COMMAND (the test user) can neither change the operator's policy
# file nor add one next to it, nor create /etc/egret.
t_policy_checkout_cannot_widen() {
	local tok script checkout policy f sum0 out run
	local -A n0
	require_builtin_default
	checkout=$TDIR/checkout
	mkdir -m 0755 "$checkout" "$checkout/.egret" "$checkout/etc" "$checkout/etc/egret" \
		"$checkout/.config" "$checkout/.config/egret" "$checkout/.github" || fail "mkdir checkout"
	for f in policy.yaml policy.yml .egret.yaml .egret.yml egret.yaml .egret/policy.yaml \
		.egret/config.yaml etc/egret/policy.yaml .config/egret/policy.yaml \
		.github/egret.yaml; do
		printf '%s' "$PLANTED_POLICY" >"$checkout/$f"
		chmod 0644 "$checkout/$f"
	done
	# The planted file would pass egret's checks and widen the allowlist.
	out=$("$EGRET" check --policy "$checkout/policy.yaml" --repo owner/a --json 2>&1) ||
		fail "the planted policy is not valid, so this test would prove nothing: $out"
	[ -n "$(json_host "$out" evil.test)" ] ||
		fail "the planted policy does not allow evil.test: $out"

	policy=$(policy_path operator.yaml)
	cat >"$policy" <<'EOF'
version: 1
hosts: ["github.com:443"]
EOF
	sum0=$(sha256sum "$policy")
	script=$(dns_script cmd.sh <<'EOF'
R=$4 POL=$5
echo "pwd: $(pwd)"
echo "env: ${EGRET_ALLOW:-unset}"
echo "gh: $("$P" tcp-name github.com 443 "$T-$R-gh" 4)"
for n in evil.test registry.evil.test registry.npmjs.org; do
	echo "dig $n: $(dstatus $n)"
done
echo "evil-80: $("$P" tcp 203.0.113.11 80 "$T-$R-evil-80")"
echo "evilreg-443: $("$P" tcp 203.0.113.25 443 "$T-$R-evilreg-443")"
echo "gh-80: $("$P" tcp 203.0.113.10 80 "$T-$R-gh-80")"
echo "fs mkdir: $("$P" fs mkdir /etc/egret)"
if [ -n "$POL" ]; then
	for op in append chmod rename unlink; do
		echo "fs $op: $("$P" fs $op "$POL")"
	done
	echo "fs create: $("$P" fs create "$(dirname "$POL")/planted.yaml")"
fi
EOF
)
	cd "$checkout" || fail "cd $checkout"
	export EGRET_POLICY="$checkout/policy.yaml" EGRET_POLICY_FILE="$checkout/policy.yaml"
	export EGRET_CONFIG="$checkout/.egret.yaml" EGRET_ALLOW=evil.test
	export EGRET_HOSTS=registry.evil.test EGRET_ECOSYSTEMS=npm EGRET_REPO=owner/a
	export EGRET_GIT_REMOTE=https://evil.test/x.git XDG_CONFIG_HOME="$checkout/.config"
	export HOME="$checkout"
	for run in builtin operator; do
		tok=$(token chk)
		for f in evil.test registry.evil.test registry.npmjs.org github.com; do
			n0[$f]=$(world_dns_count "$f")
		done
		if [ "$run" = builtin ]; then
			attempt_bare --user "$TEST_USER" "${DNS[@]}" --repo owner/a \
				--git-remote https://github.com/owner/a.git \
				-- sh "$script" "$P" "$tok" "$TDIR" "$run" ""
		else
			attempt --policy "$policy" --repo owner/a --user "$TEST_USER" "${DNS[@]}" \
				-- sh "$script" "$P" "$tok" "$TDIR" "$run" "$policy"
		fi
		[ -d /etc/egret ] && [ "$(stat -c %u /etc/egret)" = "$TEST_UID" ] && rmdir /etc/egret
		assert_eq 0 "$RC" "$run: egret exit status $(said)"
		assert_eq "$checkout" "$(got pwd)" "$run: COMMAND's working directory $(said)"
		assert_eq evil.test "$(got env)" "$run: EGRET_ALLOW as COMMAND sees it $(said)"
		assert_reached gh "$tok-$run-gh" 203.0.113.10:443 \
			"$run: github.com:443 (the operator's rule: DNS works here)"
		for f in evil.test registry.evil.test registry.npmjs.org; do
			assert_eq NXDOMAIN "$(got "dig $f")" "$run: dig $f $(said)"
		done
		assert_conn_refused evil-80 "$tok-$run-evil-80" 203.0.113.11 80 "$run: evil.test's address"
		assert_conn_refused evilreg-443 "$tok-$run-evilreg-443" 203.0.113.25 443 \
			"$run: registry.evil.test's address"
		assert_conn_refused gh-80 "$tok-$run-gh-80" 203.0.113.10 80 "$run: github.com:80"
		for f in evil.test registry.evil.test registry.npmjs.org; do
			assert_dns_not_asked_since "$f" "${n0[$f]}" "$run"
		done
		assert_dns_asked_since github.com "${n0[github.com]}" "$run"
		assert_eq "err EACCES" "$(got "fs mkdir")" "$run: COMMAND creates /etc/egret $(said)"
	done
	assert_eq "err EACCES" "$(got "fs append")" "COMMAND opens the operator's policy for writing $(said)"
	assert_eq "err EPERM" "$(got "fs chmod")" "COMMAND chmods the operator's policy $(said)"
	assert_eq "err EACCES" "$(got "fs rename")" "COMMAND renames the operator's policy $(said)"
	assert_eq "err EACCES" "$(got "fs unlink")" "COMMAND removes the operator's policy $(said)"
	assert_eq "err EACCES" "$(got "fs create")" "COMMAND adds a file to the policy's directory $(said)"
	assert_eq "$sum0" "$(sha256sum "$policy")" "the operator's policy after the attempt"
	assert_absent "$(dirname "$policy")/planted.yaml" "a file COMMAND tried to add"
	assert_absent "$policy.probe" "the policy renamed by COMMAND"
}

# --- 4. who may write the policy decides: untrusted files are refused ---------

# A valid policy in a place others can write - the file group-writable, its
# directory group- or world-writable (also sticky, like /tmp), the file or
# the directory owned by nobody - is refused: exit 2, one stderr line naming
# the file, COMMAND never runs (its marker is absent). The same content in
# a root-owned 0644 file in a root-owned 0755 directory runs COMMAND.
t_policy_refused() {
	local content='hosts: ["github.com:443"]' good f what marker
	good=$(policy_path trusted.yaml)
	echo "$content" >"$good"
	chmod 0644 "$good"
	attempt --policy "$good" --user "$TEST_USER" "${DNS[@]}" -- sh -c 'touch "$1"' sh "$TDIR/ran-good"
	assert_eq 0 "$RC" "a trusted policy: egret exit status $(said)"
	assert_exists "$TDIR/ran-good" "a trusted policy: COMMAND's marker"

	mkdir -m 0777 "$TDIR/ww" && mkdir -m 0775 "$TDIR/gw" && mkdir -m 0755 "$TDIR/nb" ||
		fail "mkdir"
	chmod 0777 "$TDIR/ww" && chmod 0775 "$TDIR/gw" && chown nobody "$TDIR/nb" || fail "chmod"
	for f in "$(policy_path group-writable.yaml)" "$(policy_path owned-by-nobody.yaml)" \
		"$TDIR/ww/policy.yaml" "$TDIR/gw/policy.yaml" "$TDIR/nb/policy.yaml" \
		"$TDIR/sticky.yaml"; do
		echo "$content" >"$f"
		chmod 0644 "$f"
	done
	chmod 0664 "$(policy_path group-writable.yaml)"
	chown nobody "$(policy_path owned-by-nobody.yaml)"
	for f in "$(policy_path group-writable.yaml)" "$(policy_path owned-by-nobody.yaml)" \
		"$TDIR/ww/policy.yaml" "$TDIR/gw/policy.yaml" "$TDIR/nb/policy.yaml" \
		"$TDIR/sticky.yaml"; do
		what="policy $f ($(stat -c '%U %a' "$f"), directory $(stat -c '%U %a' "$(dirname "$f")"))"
		marker="$TDIR/ran-$(basename "$(dirname "$f")")-$(basename "$f")"
		attempt --policy "$f" --user "$TEST_USER" "${DNS[@]}" -- sh -c 'touch "$1"' sh "$marker"
		assert_refused "$what" "$marker" 2
		grep -qF -- "$f" "$TDIR/err" || fail "$what: the error line does not name the file $(said)"
		"$EGRET" check --policy "$f" >/dev/null 2>&1
		assert_eq 2 "$?" "$what: egret check exit status"
	done
}

# A policy reached through a symlink in a trusted directory is judged where
# the file really lives: a target in a world-writable directory is refused,
# as that same file is by its own path (anyone who can write the directory
# can replace the file).
t_policy_refused_symlink() {
	local real link marker
	mkdir -m 0777 "$TDIR/ww" && chmod 0777 "$TDIR/ww" || fail "mkdir"
	real="$TDIR/ww/policy.yaml"
	echo 'hosts: ["github.com:443"]' >"$real"
	chmod 0644 "$real"
	link=$(policy_path link.yaml)
	ln -s "$real" "$link" || fail "ln -s"
	"$EGRET" check --policy "$real" >/dev/null 2>&1
	assert_eq 2 "$?" "egret check --policy $real (root 644, directory root 777): exit status"
	marker="$TDIR/ran-link"
	attempt --policy "$link" --user "$TEST_USER" "${DNS[@]}" -- sh -c 'touch "$1"' sh "$marker"
	assert_refused "policy $link (in $(stat -c '%U %a' "$(dirname "$link")")), a symlink to $real (directory root 777)" \
		"$marker" 2
	grep -qF -- "$link" "$TDIR/err" || fail "the error line does not name $link $(said)"
	"$EGRET" check --policy "$link" >/dev/null 2>&1
	assert_eq 2 "$?" "egret check --policy $link (symlink to $real): exit status"
}

# An invalid policy - a misspelt key at the top level and in a repos
# section, an unknown ecosystem - exits 2 with one line per problem, each
# FILE:LINE:COLUMN with a "did you mean"; COMMAND never runs.
t_policy_invalid() {
	local policy marker n
	policy=$(policy_path invalid.yaml)
	cat >"$policy" <<'EOF'
version: 1
os_registrys: [debian]
ecosystems: [npn]
repos:
  owner/a:
    ecosystem: [npm]
EOF
	marker="$TDIR/ran-invalid"
	attempt --policy "$policy" --repo owner/a --user "$TEST_USER" "${DNS[@]}" \
		-- sh -c 'touch "$1"' sh "$marker"
	assert_eq 2 "$RC" "invalid policy: egret exit status $(said)"
	assert_absent "$marker" "invalid policy: COMMAND ran anyway, marker"
	assert_eq 3 "$(wc -l <"$TDIR/err")" "invalid policy: stderr lines (one per problem) $(said)"
	grep -qE "^egret: $policy:2:1: .*'os_registrys'.*did you mean 'os_registries'" "$TDIR/err" ||
		fail "no '$policy:2:1:' line for os_registrys with a did-you-mean $(said)"
	grep -qE "^egret: $policy:3:14: .*'npn'.*did you mean 'npm'" "$TDIR/err" ||
		fail "no '$policy:3:14:' line for ecosystem npn with a did-you-mean $(said)"
	grep -qE "^egret: $policy:6:5: .*'ecosystem'.*did you mean 'ecosystems'" "$TDIR/err" ||
		fail "no '$policy:6:5:' line for repos.owner/a.ecosystem with a did-you-mean $(said)"
	n=$(grep -cvE "^egret: $policy:[0-9]+:[0-9]+: " "$TDIR/err")
	assert_eq 0 "$n" "stderr lines without FILE:LINE:COLUMN $(said)"
}

# --- 5. egret check ---------------------------------------------------------

# `egret check --json` for the per-repo policy: owner/a lists
# registry.npmjs.org on 443 "from":"ecosystems: npm" (repos match
# case-insensitively); owner/b and no --repo do not; exit 0. For an
# invalid policy exit 2, the problems on stderr and nothing on stdout.
# No namespaces: check only reads the policy.
t_policy_check() {
	local policy bad out err rc h
	policy=$(policy_path policy.yaml)
	cat >"$policy" <<'EOF'
version: 1
os_registries: [debian]
repos:
  owner/a:
    ecosystems: [npm]
EOF
	out=$("$EGRET" check --policy "$policy" --repo owner/a --json 2>"$TDIR/check.err")
	rc=$?
	err=$(cat "$TDIR/check.err")
	assert_eq 0 "$rc" "egret check --repo owner/a exit status (stderr: $err)"
	[[ $out == '{"version":1,'* ]] && [ "$(wc -l <<<"$out")" = 1 ] ||
		fail "egret check --json: want one JSON object of version 1, got: $out"
	[[ $out == *"\"policy\":\"$policy\""* && $out == *'"builtin":false'* &&
		$out == *'"repo":"owner/a"'* ]] ||
		fail "egret check --json: policy/builtin/repo fields: $out"
	h=$(json_host "$out" registry.npmjs.org)
	[[ $h == *'"from":"ecosystems: npm"'* && $h == *'"ports":[443]'* ]] ||
		fail "owner/a: want registry.npmjs.org [443] from \"ecosystems: npm\", got '$h' in: $out"
	h=$(json_host "$out" deb.debian.org)
	[[ $h == *'"from":"os_registries: debian"'* ]] ||
		fail "owner/a: want deb.debian.org from \"os_registries: debian\", got '$h' in: $out"

	out=$("$EGRET" check --policy "$policy" --repo OWNER/A --json 2>&1)
	assert_eq 0 "$?" "egret check --repo OWNER/A exit status ($out)"
	[ -n "$(json_host "$out" registry.npmjs.org)" ] ||
		fail "--repo OWNER/A (repos match case-insensitively) lacks registry.npmjs.org: $out"

	for rc in owner/b ""; do
		out=$("$EGRET" check --policy "$policy" ${rc:+--repo "$rc"} --json 2>&1)
		assert_eq 0 "$?" "egret check ${rc:-without --repo}: exit status ($out)"
		[ -z "$(json_host "$out" registry.npmjs.org)" ] ||
			fail "${rc:-no --repo}: registry.npmjs.org listed: $out"
		[ -n "$(json_host "$out" deb.debian.org)" ] ||
			fail "${rc:-no --repo}: the top level's deb.debian.org missing: $out"
	done

	bad=$(policy_path invalid.yaml)
	printf 'version: 1\necosystems: [npn]\n' >"$bad"
	out=$("$EGRET" check --policy "$bad" --repo owner/a --json 2>"$TDIR/check.err")
	rc=$?
	err=$(cat "$TDIR/check.err")
	assert_eq 2 "$rc" "egret check of an invalid policy: exit status (stderr: $err)"
	assert_eq "" "$out" "egret check of an invalid policy: stdout"
	[[ $err == *"$bad:2:14: "*"did you mean 'npm'"* ]] ||
		fail "egret check of an invalid policy: want '$bad:2:14: ... did you mean 'npm'', got: $err"
}

# `egret check` shows both kinds of pinning: TLS ports (SNI pinning) and
# plain-HTTP ports (Host pinning), as the policy and a repository's
# section set them; a port in both lists is an error of its own.
t_policy_check_pinning() {
	local policy bad out err rc
	policy=$(policy_path pinning.yaml)
	cat >"$policy" <<'EOF'
pinning: {ports: [443, 8443], http_ports: [80, 8080]}
repos:
  owner/nopin: {pinning: false}
  owner/tlsonly: {pinning: {http_ports: []}}
EOF
	out=$("$EGRET" check --policy "$policy" 2>&1)
	assert_eq 0 "$?" "egret check of $policy: exit status ($out)"
	[[ $out == *$'\npinning: TLS ports 443, 8443; HTTP ports 80, 8080'* ]] ||
		fail "egret check: want 'pinning: TLS ports 443, 8443; HTTP ports 80, 8080', got: $out"
	out=$("$EGRET" check --policy "$policy" --json 2>&1)
	[[ $out == *'"pinning":{"ports":[443,8443],"http_ports":[80,8080]}'* ]] ||
		fail "egret check --json: want both pinning lists, got: $out"
	out=$("$EGRET" check --policy "$policy" --repo owner/nopin 2>&1)
	[[ $out == *$'\npinning: TLS off; HTTP off'* ]] ||
		fail "egret check --repo owner/nopin: want pinning off, got: $out"
	out=$("$EGRET" check --policy "$policy" --repo owner/tlsonly --json 2>&1)
	[[ $out == *'"pinning":{"ports":[443],"http_ports":[]}'* ]] ||
		fail "egret check --repo owner/tlsonly --json: want TLS on 443 only, got: $out"
	out=$("$EGRET" check --json 2>&1)
	[[ $out == *'"pinning":{"ports":[443],"http_ports":[80]}'* ]] ||
		fail "egret check --json, built-in policy: want ports [443], http_ports [80], got: $out"

	bad=$(policy_path pinning-bad.yaml)
	printf 'pinning: {ports: [443, 80]}\n' >"$bad"
	out=$("$EGRET" check --policy "$bad" 2>"$TDIR/check.err")
	rc=$?
	err=$(cat "$TDIR/check.err")
	assert_eq 2 "$rc" "egret check of a port pinned both ways: exit status (stderr: $err)"
	[[ $err == *"$bad:1:10: "*"port 80 is in both ports (TLS) and http_ports"* ]] ||
		fail "egret check of a port pinned both ways: want '$bad:1:10: ... port 80 is in both', got: $err"
}

# --- 6. git remote forms ----------------------------------------------------

# --git-remote git@github.com:owner/a.git (scp-like: ssh) opens github.com
# on 22 only, IPv4 and IPv6, plus the forge companions on 443. In the same
# policy `repos: {owner/nogit: {git_remote: false}}` removes the remote and
# its companions for that repository: NXDOMAIN, EPERM, nothing asked.
t_policy_git_remote() {
	local tok script policy out n_gh n_cl
	tok=$(token git)
	policy=$(policy_path git.yaml)
	cat >"$policy" <<'EOF'
version: 1
repos:
  owner/nogit:
    git_remote: false
EOF
	out=$("$EGRET" check --policy "$policy" --repo owner/a \
		--git-remote git@github.com:owner/a.git --json 2>&1)
	[[ $(json_host "$out" github.com) == *'"ports":[22],"from":"git_remote"'* ]] ||
		fail "egret check, scp-like remote: want github.com [22] from git_remote: $out"
	out=$("$EGRET" check --policy "$policy" --repo owner/nogit \
		--git-remote git@github.com:owner/nogit.git --json 2>&1)
	[ -z "$(json_host "$out" github.com)" ] && [ -z "$(json_host "$out" codeload.github.com)" ] ||
		fail "egret check, git_remote: false: github.com or its companions listed: $out"

	script=$(dns_script cmd.sh <<'EOF'
R=$4
echo "dig gh: $(dstatus github.com)"
echo "dig codeload: $(dstatus codeload.github.com)"
echo "gh-22: $("$P" tcp 203.0.113.10 22 "$T-$R-gh-22")"
echo "gh6-22: $("$P" tcp-name github.com 22 "$T-$R-gh6-22" 6)"
echo "gh-443: $("$P" tcp 203.0.113.10 443 "$T-$R-gh-443")"
echo "gh6-443: $("$P" tcp 2001:db8:2::10 443 "$T-$R-gh6-443")"
echo "codeload-443: $(PROBE_SNI=codeload.github.com "$P" tcp 203.0.113.23 443 "$T-$R-codeload-443")"
EOF
)
	attempt --policy "$policy" --repo owner/a --git-remote git@github.com:owner/a.git \
		--user "$TEST_USER" "${DNS[@]}" -- sh "$script" "$P" "$tok" "$TDIR" ssh
	assert_eq 0 "$RC" "ssh remote: egret exit status $(said)"
	assert_eq NOERROR "$(got "dig gh")" "ssh remote: dig github.com $(said)"
	assert_eq NOERROR "$(got "dig codeload")" "ssh remote: dig codeload.github.com $(said)"
	assert_reached gh-22 "$tok-ssh-gh-22" 203.0.113.10:22 "ssh remote: github.com:22"
	assert_reached gh6-22 "$tok-ssh-gh6-22" "[2001:db8:2::10]:22" "ssh remote: github.com:22 over IPv6"
	assert_conn_refused gh-443 "$tok-ssh-gh-443" 203.0.113.10 443 "ssh remote: github.com:443"
	assert_conn_refused gh6-443 "$tok-ssh-gh6-443" 2001:db8:2::10 443 "ssh remote: github.com:443 over IPv6"
	assert_reached codeload-443 "$tok-ssh-codeload-443" 203.0.113.23:443 \
		"ssh remote: codeload.github.com:443 (forge companion)"

	n_gh=$(world_dns_count github.com)
	n_cl=$(world_dns_count codeload.github.com)
	attempt --policy "$policy" --repo owner/nogit --git-remote git@github.com:owner/nogit.git \
		--user "$TEST_USER" "${DNS[@]}" -- sh "$script" "$P" "$tok" "$TDIR" nogit
	assert_eq 0 "$RC" "git_remote: false: egret exit status $(said)"
	assert_eq NXDOMAIN "$(got "dig gh")" "git_remote: false: dig github.com $(said)"
	assert_eq NXDOMAIN "$(got "dig codeload")" "git_remote: false: dig codeload.github.com $(said)"
	assert_conn_refused gh-22 "$tok-nogit-gh-22" 203.0.113.10 22 "git_remote: false: github.com:22"
	assert_eq "err EAI_NONAME" "$(got gh6-22)" "git_remote: false: getaddrinfo github.com $(said)"
	assert_conn_refused gh-443 "$tok-nogit-gh-443" 203.0.113.10 443 "git_remote: false: github.com:443"
	assert_conn_refused gh6-443 "$tok-nogit-gh6-443" 2001:db8:2::10 443 \
		"git_remote: false: github.com:443 over IPv6"
	assert_conn_refused codeload-443 "$tok-nogit-codeload-443" 203.0.113.23 443 \
		"git_remote: false: codeload.github.com:443"
	assert_dns_not_asked_since github.com "$n_gh" "git_remote: false"
	assert_dns_not_asked_since codeload.github.com "$n_cl" "git_remote: false"
}
