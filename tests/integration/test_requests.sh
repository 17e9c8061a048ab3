# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016,SC2034
# test_requests.sh - allowlist-extension requests and the operator's review
# gate (docs/POLICY.md, "Requests"): denials of a --repo attempt become
# requests in the state directory; `egret requests approve` writes the
# repository's approvals file, which its next attempts (and its running
# ones) take up; `deny` dismisses for good; the sandbox can do none of it.
#
# Sourced by run.sh after test_dns.sh (dns_script, got, assert_landed,
# assert_not_landed, DNS). Names from tests/world/world.sh:
#   registry.evil.test 203.0.113.25 (no policy names it)
#   pypi.org 203.0.113.24
# Every test keeps its store in $TDIR/state and its policy (so approvals)
# in $TDIR/etc: nothing touches /var/lib/egret or /etc/egret.

# The policy every test uses: the world's resolver, nothing else allowed.
req_policy() {
	local p
	p=$(policy_path policy.yaml)
	printf 'version: 1\n' >"$p"
	echo "$p"
}

# An attempt of REPO running SCRIPT with the test's store and policy;
# sets RC, OUT, ERR like attempt, and REQ_ID to the attempt's id.
req_attempt() {	# REPO SCRIPT [ARGS...]
	local repo=$1
	shift
	REQ_ID="$ID_PREFIX-$RANDOM$RANDOM"
	attempt_bare --policy "$TDIR/etc/policy.yaml" --state-dir "$TDIR/state" \
		--repo "$repo" --id "$REQ_ID" --user "$TEST_USER" "${DNS[@]}" -- sh "$@"
}

# The store as JSON (pending, or everything with --all).
req_json() {	# [--all]
	"$EGRET" requests list --json --state-dir "$TDIR/state" "$@" ||
		fail "egret requests list --json failed"
}

# The id of REPO's request for TARGET and PORT ("null": a lookup).
req_id() {	# REPO TARGET PORT [--all]
	req_json "${@:4}" | jq -r --arg r "$1" --arg t "$2" --argjson p "$3" \
		'.requests[] | select(.repo == $r and .target == $t and .port == $p) | .id'
}

req_field() {	# ID FIELD: from --all
	req_json --all | jq -r --argjson id "$1" ".requests[] | select(.id == \$id) | .$2"
}

# 1. Denied names and destinations become requests of the attempt's repo,
# deduplicated, with counts, attempts, times and an example process.
t_requests_recorded() {
	local tok script id1 id2 json a1 a2 n
	tok=$(token req)
	req_policy >/dev/null
	script=$(dns_script cmd.sh <<'EOF'
echo "name: $(dstatus registry.evil.test)"
echo "tcpname: $(dstatus +tcp denied.test)"
echo "addr1: $("$P" tcp 203.0.113.25 443 "$T-1")"
echo "addr2: $("$P" tcp 203.0.113.25 443 "$T-2")"
echo "curl: $(curl -s -m 2 -o /dev/null "http://203.0.113.25:443/$T-3"; echo $?)"
EOF
)
	req_attempt owner/a "$script" "$P" "$tok" "$TDIR"
	[ "$RC" = 0 ] || fail "attempt $(said)"
	assert_eq NXDOMAIN "$(got name)" "dig registry.evil.test"
	assert_eq "$REFUSED" "$(got addr1)" "203.0.113.25:443"
	assert_not_landed "$tok-2" tcp 203.0.113.25 443 "203.0.113.25:443"
	a1=$REQ_ID

	json=$(req_json)
	id1=$(req_id owner/a registry.evil.test null)
	id2=$(req_id owner/a 203.0.113.25 443)
	[ -n "$id1" ] && [ -n "$id2" ] && [ "$id1" != "$id2" ] ||
		fail "want a lookup request and an address request for owner/a, got: $json"
	assert_eq 3 "$(jq '.requests | length' <<<"$json")" "number of requests"
	assert_eq "name pending dig" "$(jq -r \
		'.requests[] | select(.target == "denied.test") | "\(.kind) \(.status) \(.process.comm)"' \
		<<<"$json")" "lookup request over TCP (kind, status, process)"
	assert_eq "3 1 tcp probe" "$(jq -r --argjson id "$id2" \
		'.requests[] | select(.id == $id) | "\(.count) \(.attempts) \(.proto) \(.process.comm)"' \
		<<<"$json")" "address request: count, attempts, proto, process"
	# Each distinct command that was refused it, not only the first.
	assert_eq '["probe","curl"]' "$(jq -c --argjson id "$id2" \
		'.requests[] | select(.id == $id) | .commands' <<<"$json")" "address request: its commands"
	n=$(jq -r --argjson id "$id2" '.requests[] | select(.id == $id) | .process.pid' <<<"$json")
	[ "$n" -gt 1 ] || fail "address request: example pid '$n'"
	assert_eq "$a1" "$(jq -r --argjson id "$id2" '.requests[] | select(.id == $id) | .recent_attempts[0]' \
		<<<"$json")" "address request: attempt id"
	assert_eq "name dns pending dig" "$(jq -r --argjson id "$id1" \
		'.requests[] | select(.id == $id) | "\(.kind) \(.proto) \(.status) \(.process.comm)"' \
		<<<"$json")" "lookup request (kind, proto, status, the process that asked)"

	# The same denials again: the same two requests count up.
	req_attempt owner/a "$script" "$P" "$(token req)" "$TDIR"
	[ "$RC" = 0 ] || fail "second attempt $(said)"
	json=$(req_json)
	assert_eq 3 "$(jq '.requests | length' <<<"$json")" "requests after a second attempt"
	assert_eq "6 2" "$(jq -r --argjson id "$id2" \
		'.requests[] | select(.id == $id) | "\(.count) \(.attempts)"' <<<"$json")" \
		"address request after two attempts: count, attempts"
	a2=$REQ_ID
	assert_eq "$a1 $a2" "$(jq -r --argjson id "$id2" \
		'.requests[] | select(.id == $id) | .recent_attempts | join(" ")' <<<"$json")" \
		"address request: attempt ids"

	# Another repo's denials are its own requests; an attempt without
	# --repo records none.
	req_attempt owner/b "$script" "$P" "$(token req)" "$TDIR"
	[ -n "$(req_id owner/b 203.0.113.25 443)" ] || fail "owner/b has no request: $(req_json)"
	[ "$(req_id owner/b 203.0.113.25 443)" != "$id2" ] || fail "owner/b shares owner/a's request id"
	assert_eq 3 "$("$EGRET" requests list --json --repo owner/a --state-dir "$TDIR/state" |
		jq '.requests | length')" "list --repo owner/a"
	attempt --state-dir "$TDIR/state" --user "$TEST_USER" -- "$P" tcp 203.0.113.25 80 "$(token x)"
	assert_eq "" "$(req_id owner/a 203.0.113.25 80)$(req_id owner/b 203.0.113.25 80)" \
		"a request from an attempt without --repo"

	# The text listing: most frequent first, one line per request.
	"$EGRET" requests list --state-dir "$TDIR/state" >"$TDIR/list" || fail "requests list"
	assert_eq 7 "$(wc -l <"$TDIR/list")" "lines of the text listing (header + 3 per repo)"
	grep -q "^$id2 .*owner/a .*203.0.113.25:443 .*tcp .* 6 .* 2 .*probe\[[0-9]*\] +curl$" "$TDIR/list" ||
		fail "text listing lacks owner/a's address request: $(cat "$TDIR/list")"
	note "$(cat "$TDIR/list")"
	[ "$(sed -n 2p "$TDIR/list" | awk '{ print $1 }')" = "$id2" ] ||
		fail "most frequent request is not first: $(cat "$TDIR/list")"
	[ "$(stat -c '%U %a' "$TDIR/state")" = "root 700" ] ||
		fail "state directory: $(stat -c '%U %a' "$TDIR/state")"
}

# A TLS connection refused by SNI pinning asks for the name it asked for
# (the ClientHello's), not for the address another name taught.
t_requests_tls_name() {
	local script json id
	cat >"$(policy_path policy.yaml)" <<'EOF'
version: 1
hosts: ["registry.npmjs.org:443"]
EOF
	script=$(dns_script cmd.sh <<'EOF'
H=$(dirname "$P")/tlshello
echo "resolve: $(getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print $1 }')"
echo "tls: $("$H" 203.0.113.11 443 tenant.cdn.test)"
EOF
)
	req_attempt owner/a "$script" "$P" "$(token tlsreq)" "$TDIR"
	[ "$RC" = 0 ] || fail "attempt $(said)"
	assert_eq 203.0.113.11 "$(got resolve)" "registry.npmjs.org resolved"
	assert_eq "err EACCES" "$(got tls)" "a ClientHello for tenant.cdn.test at npm's address"
	json=$(req_json)
	id=$(req_id owner/a tenant.cdn.test 443)
	[ -n "$id" ] || fail "no request for tenant.cdn.test:443: $json"
	assert_eq "name tcp tlshello" "$(jq -r --argjson id "$id" \
		'.requests[] | select(.id == $id) | "\(.kind) \(.proto) \(.process.comm)"' \
		<<<"$json")" "the TLS name's request (kind, proto, process)"
	[ -z "$(req_id owner/a 203.0.113.11 443)" ] ||
		fail "a request for the address too: $json"
}

# A plain-HTTP request refused by Host pinning asks for the host it named
# (its Host), not for the address another name taught.
t_requests_http_name() {
	local script json id
	cat >"$(policy_path policy.yaml)" <<'EOF'
version: 1
hosts: ["registry.npmjs.org:80"]
EOF
	script=$(dns_script cmd.sh <<'EOF'
H=$(dirname "$P")/tlshello
echo "resolve: $(getent ahostsv4 registry.npmjs.org | awk 'NR == 1 { print $1 }')"
echo "http: $("$H" --wait-ms 6000 --http 'GET / HTTP/1.1\r\nHost: tenant.cdn.test\r\n\r\n' 203.0.113.11 80 -)"
EOF
)
	req_attempt owner/a "$script" "$P" "$(token httpreq)" "$TDIR"
	[ "$RC" = 0 ] || fail "attempt $(said)"
	assert_eq 203.0.113.11 "$(got resolve)" "registry.npmjs.org resolved"
	assert_eq "err ETIMEDOUT" "$(got http)" "a GET for tenant.cdn.test at npm's address"
	json=$(req_json)
	id=$(req_id owner/a tenant.cdn.test 80)
	[ -n "$id" ] || fail "no request for tenant.cdn.test:80: $json"
	assert_eq "name tcp" "$(jq -r --argjson id "$id" \
		'.requests[] | select(.id == $id) | "\(.kind) \(.proto)"' \
		<<<"$json")" "the HTTP host's request (kind, proto)"
	[ -z "$(req_id owner/a 203.0.113.11 80)" ] ||
		fail "a request for the address too: $json"
}

# 2. Approving a lookup request allows the name for that repo only, from its
# next attempt; the approvals file says who and when; egret check shows it.
t_requests_approve() {
	local tok script id file out
	tok=$(token appr)
	req_policy >/dev/null
	script=$(dns_script cmd.sh <<'EOF'
echo "conn: $("$P" tcp-name registry.evil.test 443 "$T-$4" 4)"
EOF
)
	req_attempt owner/a "$script" "$P" "$tok" "$TDIR" a0
	assert_eq "err EAI_NONAME" "$(got conn)" "owner/a before approval"
	id=$(req_id owner/a registry.evil.test null)
	[ -n "$id" ] || fail "no lookup request: $(req_json)"

	out=$(SUDO_USER=alice "$EGRET" requests approve "$id" --ports 443 \
		--policy "$TDIR/etc/policy.yaml" --state-dir "$TDIR/state" 2>&1) ||
		fail "approve $id: $out"
	file=$TDIR/etc/approved.d/owner__a.yaml
	assert_exists "$file" "approvals file"
	[ "$(stat -c '%U %a' "$file")" = "root 644" ] ||
		fail "approvals file owner and mode: $(stat -c '%U %a' "$file")"
	grep -q 'host: "registry.evil.test"' "$file" && grep -q 'ports: "443"' "$file" &&
		grep -q "request: $id" "$file" && grep -q 'approved_by: "alice (uid 0)"' "$file" &&
		grep -q 'approved_at: "20' "$file" || fail "approvals file: $(cat "$file")"
	assert_eq "approved alice (uid 0)" "$(req_field "$id" status) $(req_field "$id" decided_by)" \
		"request after approval"
	assert_eq "" "$(req_id owner/a registry.evil.test null)" "approved request still pending"

	out=$("$EGRET" check --policy "$TDIR/etc/policy.yaml" --repo owner/a) || fail "check: $out"
	grep -Eq "^registry.evil.test +443 +approval #$id, alice \(uid 0\), 20[0-9-]{8}" <<<"$out" ||
		fail "egret check --repo owner/a does not show the approval: $out"
	out=$("$EGRET" check --policy "$TDIR/etc/policy.yaml" --repo owner/b) || fail "check b: $out"
	! grep -q registry.evil.test <<<"$out" || fail "owner/b's check shows owner/a's approval: $out"

	req_attempt owner/a "$script" "$P" "$tok" "$TDIR" a1
	assert_eq ok "$(got conn)" "owner/a after approval $(said)"
	assert_landed "$tok-a1" 203.0.113.25:443 "owner/a after approval"
	req_attempt owner/b "$script" "$P" "$tok" "$TDIR" b1
	assert_eq "err EAI_NONAME" "$(got conn)" "owner/b while owner/a is approved"
	assert_not_landed "$tok-b1" tcp 203.0.113.25 443 "owner/b"
	# Approving again changes nothing...
	out=$("$EGRET" requests approve "$id" --ports 443 --policy "$TDIR/etc/policy.yaml" \
		--state-dir "$TDIR/state" 2>&1) || fail "approve again: $out"
	grep -q "approved already" <<<"$out" && ! grep -q "^wrote" <<<"$out" ||
		fail "approve again: $out"
	assert_eq 1 "$(grep -c 'host:' "$file")" "entries after approving twice"
	# ... unless the operator removed the entry by hand: it is written again,
	# without --ports too: a lookup asked for no port, so 443 (HTTPS), never
	# the policy's whole default (plain HTTP with it).
	printf 'version: 1\nrepo: owner/a\napprovals: []\n' >"$file"
	out=$("$EGRET" requests approve "$id" --policy "$TDIR/etc/policy.yaml" \
		--state-dir "$TDIR/state" 2>&1) || fail "approve after removal: $out"
	grep -q "^wrote 1 approval to $file" <<<"$out" || fail "approve after removal: $out"
	grep -q 'host: "registry.evil.test"' "$file" || fail "entry not written again: $(cat "$file")"
	assert_eq 'ports: "443"' "$(grep -o 'ports: .*' "$file")" "the ports a lookup's approval opens"
}

# 3. A denied request is dismissed: the same denial later counts, but the
# request never comes back as pending. Unknown ids change nothing.
t_requests_deny() {
	local script id out before
	req_policy >/dev/null
	script=$(dns_script cmd.sh <<'EOF'
echo "conn: $("$P" tcp 203.0.113.24 8080 "$T")"
EOF
)
	req_attempt owner/a "$script" "$P" "$(token d)" "$TDIR"
	id=$(req_id owner/a 203.0.113.24 8080)
	[ -n "$id" ] || fail "no request: $(req_json --all)"
	before=$(req_json --all)
	out=$("$EGRET" requests deny "$id" 999999 --state-dir "$TDIR/state" 2>&1) &&
		fail "deny with an unknown id succeeded: $out"
	grep -q "no request 999999" <<<"$out" || fail "unknown id message: $out"
	assert_eq "$before" "$(req_json --all)" "store after a refused deny"
	"$EGRET" requests deny "$id" --state-dir "$TDIR/state" >/dev/null || fail "deny $id"
	assert_eq "" "$(req_id owner/a 203.0.113.24 8080)" "denied request still pending"
	req_attempt owner/a "$script" "$P" "$(token d)" "$TDIR"
	assert_eq "$REFUSED" "$(got conn)" "denied request's destination"
	assert_eq "" "$(req_id owner/a 203.0.113.24 8080)" "denied request pending again"
	assert_eq "denied 2" "$(req_field "$id" status) $(req_field "$id" count)" \
		"denied request after another denial"
	assert_eq 1 "$(req_json --all | jq '.requests | length')" "requests (no duplicate)"
	out=$("$EGRET" requests list --state-dir "$TDIR/state" --all) || fail "list --all"
	grep -q "^$id  *denied " <<<"$out" || fail "list --all: $out"
	# Approved ones cannot be denied (that is a revocation: edit the file).
	out=$("$EGRET" requests approve "$id" --policy "$TDIR/etc/policy.yaml" \
		--state-dir "$TDIR/state" 2>&1) || fail "approving a denied request: $out"
	"$EGRET" requests deny "$id" --state-dir "$TDIR/state" 2>"$TDIR/deny.err" &&
		fail "denying an approved request succeeded"
	grep -q "is approved" "$TDIR/deny.err" || fail "deny approved: $(cat "$TDIR/deny.err")"
}

# hidden_left DIR: the hidden files writers left in DIR (lib/atomic_file.h:
# ".NAME.new-..."), each with "locked" or "unlocked" (a dead writer's).
hidden_left() {
	local f
	for f in "$1"/.*.new-* "$1"/.new-*; do
		[ -e "$f" ] || continue
		if flock -n "$f" true; then echo "${f##*/} unlocked"; else echo "${f##*/} locked"; fi
	done
}

# A writer of the store or of an approvals file killed between writing a
# file whole and renaming it into place (killat.so: the worst moment)
# leaves the old file as it was and a hidden one; the next opening of the
# store, and the next approval, remove it. The kill is real: the control
# shows the hidden file there before.
t_requests_half_written() {
	local script id out file before
	req_policy >/dev/null
	script=$(dns_script cmd.sh <<'EOF'
echo "conn: $("$P" tcp 203.0.113.24 8080 "$T")"
EOF
)
	req_attempt owner/a "$script" "$P" "$(token hw)" "$TDIR"
	id=$(req_id owner/a 203.0.113.24 8080)
	[ -n "$id" ] || fail "no request: $(req_json --all)"
	before=$(req_json --all)

	env LD_PRELOAD="$HELPERS/killat.so" EGRET_T_KILL_AT=.owner__a.new- \
		"$EGRET" requests deny "$id" --state-dir "$TDIR/state" >/dev/null 2>&1
	assert_eq 137 "$?" "egret requests deny killed at its store's rename"
	assert_contains ".owner__a.new-" "$(hidden_left "$TDIR/state/requests")" \
		"control: the killed writer's hidden file"
	assert_eq "$before" "$(req_json --all)" "the store after the killed deny"
	assert_eq "" "$(hidden_left "$TDIR/state/requests")" \
		"hidden files in the store after the next opening"

	file=$TDIR/etc/approved.d/owner__a.yaml
	env LD_PRELOAD="$HELPERS/killat.so" EGRET_T_KILL_AT=.owner__a.yaml.new- \
		"$EGRET" requests approve "$id" --policy "$TDIR/etc/policy.yaml" \
		--state-dir "$TDIR/state" >/dev/null 2>&1
	assert_eq 137 "$?" "egret requests approve killed at the approvals file's rename"
	assert_absent "$file" "approvals file after the killed approval"
	assert_contains ".owner__a.yaml.new-" "$(hidden_left "$TDIR/etc/approved.d")" \
		"control: the killed approver's hidden file"
	out=$("$EGRET" requests approve "$id" --policy "$TDIR/etc/policy.yaml" \
		--state-dir "$TDIR/state" 2>&1) || fail "approve after the killed one: $out"
	grep -q '203.0.113.24' "$file" || fail "approvals file: $(cat "$file")"
	assert_eq "" "$(hidden_left "$TDIR/etc/approved.d")" "hidden files beside the approvals"
	assert_eq "" "$(hidden_left "$TDIR/state/requests")$(hidden_left "$TDIR/state")" \
		"hidden files in the store"
}

# 4. The sandbox cannot touch the store or the approvals: COMMAND (the test user)
# tries to create, edit, replace and approve, and everything stays as it was.
t_requests_sandbox_cannot_write() {
	local script id sum_state sum_appr out
	req_policy >/dev/null
	script=$(dns_script cmd.sh <<'EOF'
"$P" tcp 203.0.113.25 443 "$T" >/dev/null
EOF
)
	req_attempt owner/a "$script" "$P" "$(token s)" "$TDIR"
	id=$(req_id owner/a 203.0.113.25 443)
	[ -n "$id" ] || fail "no request"
	"$EGRET" requests approve "$id" --policy "$TDIR/etc/policy.yaml" \
		--state-dir "$TDIR/state" >/dev/null || fail "approve"
	sum_state=$(find "$TDIR/state" -type f -exec sha256sum {} + | sort)
	sum_appr=$(find "$TDIR/etc" -type f -exec sha256sum {} + | sort)
	script=$(write_script evil.sh <<'EOF'
S=$1 E=$2
try() { if "$@" 2>/dev/null; then echo "WROTE: $*"; else echo "refused: $*"; fi; }
try touch "$S/x"
try sh -c "echo 1 >>'$S/requests/owner__a'"
try sh -c "echo 999 >'$S/next-id'"
try mkdir "$S/requests/y"
try sh -c "echo '  - host: evil.test' >>'$E/approved.d/owner__a.yaml'"
try touch "$E/approved.d/owner__b.yaml"
try mv "$E/approved.d" "$E/gone"
try touch "$E/policy.yaml"
try "$EGRET" requests approve 1 --state-dir "$S" --policy "$E/policy.yaml"
try "$EGRET" requests list --state-dir "$S"
ls "$S" >/dev/null 2>&1 && echo "LISTED: $S"
EOF
)
	EGRET=$EGRET req_attempt owner/a "$script" "$TDIR/state" "$TDIR/etc"
	note "$OUT"
	! grep -q "WROTE\|LISTED" <<<"$OUT" || fail "the sandbox wrote: $(grep "WROTE\|LISTED" <<<"$OUT")"
	assert_eq 10 "$(grep -c '^refused' <<<"$OUT")" "refused writes $(said)"
	assert_eq "$sum_state" "$(find "$TDIR/state" -type f -exec sha256sum {} + | sort)" \
		"state directory after the sandbox tried"
	assert_eq "$sum_appr" "$(find "$TDIR/etc" -type f -exec sha256sum {} + | sort)" \
		"approvals after the sandbox tried"
	out=$(stat -c '%U %a' "$TDIR/state" "$TDIR/state/requests" "$TDIR/state/requests/owner__a" \
		"$TDIR/etc/approved.d" "$TDIR/etc/approved.d/owner__a.yaml" | tr '\n' ' ')
	assert_eq "root 700 root 700 root 600 root 755 root 644 " "$out" "owners and modes"
}

# 5. An approval reaches a running attempt of the repo: a name and an
# address approved while COMMAND retries get through within the documented
# latency (the approvals file is polled every second; the script retries
# every 0.2 s; the bound, 15 s, leaves room for a loaded machine).
t_requests_live_approval() {
	local tok script pid idn ida t0 t1 elapsed
	tok=$(token live)
	req_policy >/dev/null
	script=$(dns_script cmd.sh <<'EOF'
for kind in name addr; do
	i=0
	while :; do
		if [ $kind = name ]; then
			r=$("$P" tcp-name registry.evil.test 443 "$T-$kind-$i" 4)
		else
			r=$("$P" tcp 203.0.113.24 8080 "$T-$kind-$i")
		fi
		[ "$r" = ok ] && break
		i=$((i + 1))
		[ $i -gt 300 ] && break
		touch "$D/$kind.tried"
		sleep 0.2
	done
	echo "$kind: $r $i"
	date +%s.%N >"$D/$kind.ok"
done
EOF
)
	timeout -k 5 90 "${WORLD_IN_CLIENT[@]}" "$EGRET" run -v --policy "$TDIR/etc/policy.yaml" \
		--state-dir "$TDIR/state" --repo owner/a --id "$ID_PREFIX-live" --user "$TEST_USER" \
		"${DNS[@]}" -- \
		sh "$script" "$P" "$tok" "$TDIR" >"$TDIR/out" 2>"$TDIR/err" &
	pid=$!
	wait_until 20 eval '[ -n "$(req_id owner/a registry.evil.test null)" ]' ||
		fail "no lookup request while the attempt runs: $(cat "$TDIR/err")"
	idn=$(req_id owner/a registry.evil.test null)
	t0=$(date +%s.%N)
	"$EGRET" requests approve "$idn" --ports 443 --policy "$TDIR/etc/policy.yaml" \
		--state-dir "$TDIR/state" >/dev/null || fail "approve the name"
	wait_until 20 test -e "$TDIR/name.ok" || fail "name never got through: $(cat "$TDIR/out" "$TDIR/err")"
	t1=$(cat "$TDIR/name.ok")
	elapsed=$(awk "BEGIN { print $t1 - $t0 }")
	note "name approved -> connected: ${elapsed}s"
	awk "BEGIN { exit !($elapsed < 15) }" || fail "name took ${elapsed}s after approval"

	wait_until 20 eval '[ -n "$(req_id owner/a 203.0.113.24 8080)" ]' ||
		fail "no address request while the attempt runs"
	ida=$(req_id owner/a 203.0.113.24 8080)
	t0=$(date +%s.%N)
	"$EGRET" requests approve "$ida" --policy "$TDIR/etc/policy.yaml" \
		--state-dir "$TDIR/state" >/dev/null || fail "approve the address"
	reap "$pid" 30
	assert_eq 0 "$REAPED" "egret exit status ($(cat "$TDIR/err"))"
	t1=$(cat "$TDIR/addr.ok")
	elapsed=$(awk "BEGIN { print $t1 - $t0 }")
	note "address approved -> connected: ${elapsed}s"
	awk "BEGIN { exit !($elapsed < 15) }" || fail "address took ${elapsed}s after approval"
	grep -q "^name: ok" "$TDIR/out" && grep -q "^addr: ok" "$TDIR/out" ||
		fail "attempt output: $(cat "$TDIR/out")"
	assert_landed "$tok-addr-$(sed -n 's/^addr: ok //p' "$TDIR/out")" 203.0.113.24:8080 \
		"address approved while running"
	grep -q "approvals: 1 hosts and 0 addresses added" "$TDIR/err" &&
		grep -q "approvals: 0 hosts and 1 addresses added" "$TDIR/err" ||
		fail "egret did not report the live approvals: $(cat "$TDIR/err")"
}

# 6. Fail closed: an approvals file egret cannot trust or read refuses the
# attempt (exit 2, one line, COMMAND never runs), as does a state directory
# someone else owns (125); `--policy none` reads no approvals at all.
t_requests_refused() {
	local file marker=$TDIR/ran
	req_policy >/dev/null
	mkdir -m 755 "$TDIR/etc/approved.d"
	file=$TDIR/etc/approved.d/owner__a.yaml
	printf 'version: 1\nrepo: owner/a\napprovals:\n  - host: a.example\n    prots: [1]\n' >"$file"
	req_attempt owner/a -c "touch $marker"
	assert_refused "approvals file with an unknown key" "$marker" 2
	grep -q "owner__a.yaml:5:5: unknown key 'prots' in an approval (did you mean 'ports'?)" <<<"$ERR" ||
		fail "message: $(said)"
	printf 'version: 1\nrepo: owner/b\napprovals: []\n' >"$file"
	req_attempt owner/a -c "touch $marker"
	assert_refused "another repository's approvals file" "$marker" 2
	printf 'version: 1\nrepo: owner/a\napprovals:\n  - host: evil.test\n' >"$file"
	chmod 666 "$file"
	req_attempt owner/a -c "touch $marker"
	assert_refused "world-writable approvals file" "$marker" 2
	grep -q "refused: the approvals file must be owned by root" <<<"$ERR" || fail "message: $(said)"
	chmod 644 "$file"
	chown nobody "$file"
	req_attempt owner/a -c "touch $marker"
	assert_refused "approvals file owned by nobody" "$marker" 2
	# --policy none: the command line alone, no approvals.
	attempt --repo owner/a --state-dir "$TDIR/state" --user "$TEST_USER" -- sh -c "touch $marker"
	[ "$RC" = 0 ] && [ -e "$marker" ] || fail "--policy none with a bad approvals file $(said)"
	rm -f "$marker" "$file"

	mkdir -m 700 "$TDIR/nstate"
	chown nobody "$TDIR/nstate"
	attempt_bare --policy "$TDIR/etc/policy.yaml" --state-dir "$TDIR/nstate" --repo owner/a \
		--user "$TEST_USER" "${DNS[@]}" -- sh -c "touch $marker"
	assert_refused "a state directory owned by nobody" "$marker" 125
	grep -q "prepare state directory $TDIR/nstate" <<<"$ERR" || fail "message: $(said)"
}
