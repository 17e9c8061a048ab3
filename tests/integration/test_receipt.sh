# shellcheck shell=bash
# shellcheck disable=SC2016,SC2034 # $1 in single quotes is the inner shell's; EGRETD_PID is egretd_stop's
# test_receipt.sh - signed egress receipts (issue 44; attempt/receipt.h,
# observe/receipt.h, docs/RECEIPTS.md): sourced by run.sh.

# receipt_edit FILE OUT PY: OUT is FILE with its first line changed by
# the python expression PY over `b` (the line's JSON, a dict); the
# signature line kept. The edit is written back canonically (no spaces),
# as egret writes it, so only the change differs.
receipt_edit() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
src, out, expr = sys.argv[1:4]
lines = open(src).read().split("\n")
b = json.loads(lines[0])
exec(expr)
lines[0] = json.dumps(b, separators=(",", ":"))
open(out, "w").write("\n".join(lines))
PY
}

# receipt_tampered FILE WHAT: verifying FILE fails, saying it changed.
receipt_tampered() {
	local out rc
	out=$("$EGRET" receipt verify --state-dir "$TDIR/state" "$1" 2>&1)
	rc=$?
	if [ "$rc" != 1 ] || ! grep -q "does not verify" <<<"$out"; then
		fail "a receipt with $2 verified (rc=$rc): $out"
	fi
}

# Root's egret: an attempt with an allowed flow, a refused one and a
# refused name, which exits 3. Its receipt verifies and says so; any edit
# of it fails; a copy is kept, root's; the key is root's 0600.
t_receipt_root() {
	local tok r j out
	tok=$(token rc)
	r=$TDIR/r.json
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 --repo owner/app \
		--state-dir "$TDIR/state" --dns-upstream "$WORLD_DNS" --receipt "$r" -- \
		sh -c '"$1" tcp 203.0.113.10 80 "$2"; "$1" tcp 203.0.113.11 80 "$2-x"; getent hosts evil.example; exit 3' \
		sh "$P" "$tok"
	assert_eq 3 "$RC" "egret exit status $(said)"
	j=$("$EGRET" receipt verify --state-dir "$TDIR/state" "$r" 2>"$TDIR/verify.err") ||
		fail "the receipt does not verify: $(cat "$TDIR/verify.err") [$(cat "$r")]"
	grep -q "verified: signed by ed25519:" "$TDIR/verify.err" || fail "verify's word: $(cat "$TDIR/verify.err")"
	assert_eq '3 null false owner/app true egret' \
		"$(jq -r '"\(.exit.status) \(.exit.signal) \(.exit.timed_out) \(.repo) \(.complete) \(.via)"' <<<"$j")" \
		"the receipt's exit and repository"
	assert_eq '1 203.0.113.11 80 tcp no-entry' \
		"$(jq -r '"\(.refusals.connect) \(.refused[0].address) \(.refused[0].port) \(.refused[0].proto) \(.refused[0].reason)"' <<<"$j")" \
		"the receipt's refusal"
	assert_eq 'evil.example not-allowed' \
		"$(jq -r '.names_refused[0] | "\(.name) \(.why)"' <<<"$j")" "the receipt's refused name"
	assert_eq '203.0.113.10:80 1' "$(jq -r '.destinations[0] | "\(.name) \(.connections)"' <<<"$j")" \
		"the receipt's destination"
	[ "$(jq -r '.destinations[0].sent' <<<"$j")" -gt 0 ] || fail "no bytes sent in the receipt: $j"
	[[ $(jq -r .policy_sha256 <<<"$j") =~ ^[0-9a-f]{64}$ ]] || fail "the policy digest: $j"

	receipt_edit "$r" "$TDIR/e1" 'b["destinations"][0]["sent"] += 1'
	receipt_tampered "$TDIR/e1" "a byte count changed"
	receipt_edit "$r" "$TDIR/e2" 'b["refused"] = []; b["refusals"] = {}'
	receipt_tampered "$TDIR/e2" "its refusal removed"
	receipt_edit "$r" "$TDIR/e3" 'b["exit"]["status"] = 0'
	receipt_tampered "$TDIR/e3" "its exit status changed"
	receipt_edit "$r" "$TDIR/e4" 'pass'
	"$EGRET" receipt verify --state-dir "$TDIR/state" "$TDIR/e4" >/dev/null 2>&1 ||
		fail "the unedited receipt, written again the same way, does not verify"
	# Signed by a key the verifier does not trust: refused.
	out=$("$EGRET" receipt verify --key "$("$EGRET" receipt key --key-file "$TDIR/other.key")" "$r" 2>&1) &&
		fail "a receipt verified against another key: $out"
	assert_contains "not by ed25519:" "$out" "verify against another key"

	local id mode
	id=$(jq -r .attempt <<<"$j")
	cmp -s "$r" "$TDIR/state/receipts/$id.json" || fail "no copy of the receipt kept in the state directory"
	mode=$(stat -c '%U %a' "$TDIR/state/receipt.key" "$TDIR/state/receipts/$id.json" | tr '\n' ' ')
	assert_eq "root 600 root 600 " "$mode" "the key's and the kept receipt's owner and mode"
}

# An attempt ended by --timeout, and one whose COMMAND was killed: each
# receipt says so, and verifies.
t_receipt_killed() {
	local j
	attempt --user "$TEST_USER" --state-dir "$TDIR/state" --timeout 1s --receipt "$TDIR/t.json" \
		-- sleep 30
	assert_eq 124 "$RC" "a timed-out attempt $(said)"
	j=$("$EGRET" receipt verify --state-dir "$TDIR/state" "$TDIR/t.json" 2>"$TDIR/v.err") ||
		fail "verify: $(cat "$TDIR/v.err")"
	assert_eq "124 true" "$(jq -r '"\(.exit.status) \(.exit.timed_out)"' <<<"$j")" "the timed-out receipt"
	attempt --user "$TEST_USER" --state-dir "$TDIR/state" --receipt "$TDIR/k.json" \
		-- sh -c 'kill -9 $$'
	assert_eq 137 "$RC" "a killed COMMAND $(said)"
	j=$("$EGRET" receipt verify --state-dir "$TDIR/state" "$TDIR/k.json" 2>"$TDIR/v.err") ||
		fail "verify: $(cat "$TDIR/v.err")"
	assert_eq "137 9 false" "$(jq -r '"\(.exit.status) \(.exit.signal) \(.exit.timed_out)"' <<<"$j")" \
		"the killed COMMAND's receipt"
}

# Through egretd: the caller opens its receipt file with its own rights
# (a file it cannot write, or a symlink, is refused before anything
# runs), egretd signs with its key, which the caller cannot read; the
# receipts egretd keeps are out of the caller's reach.
t_receipt_egretd() {
	local state=/run/egretd-test-$$/state j pub
	egretd_start
	via --repo octo/app --receipt "$TDIR/r.json" -- sh -c 'exit 5'
	assert_eq 5 "$RC" "through egretd $(said)"
	assert_eq "$TEST_UID" "$(stat -c %u "$TDIR/r.json")" "the receipt file's owner: the caller"
	pub=$("$EGRET" receipt key --state-dir "$state") || fail "egretd's public key"
	j=$("$EGRET" receipt verify --key "$pub" "$TDIR/r.json" 2>"$TDIR/v.err") ||
		fail "verify through egretd: $(cat "$TDIR/v.err")"
	assert_eq "5 egretd $TEST_UID octo/app" \
		"$(jq -r '"\(.exit.status) \(.via) \(.caller_uid) \(.repo)"' <<<"$j")" "the receipt through egretd"
	# The caller reaches neither the key nor the kept receipts.
	! "${AS_TEST_USER[@]}" cat "$state/receipt.key" >/dev/null 2>&1 ||
		fail "the caller read egretd's key"
	! "${AS_TEST_USER[@]}" "$EGRET" receipt key --state-dir "$state" >/dev/null 2>&1 ||
		fail "the caller got egretd's key through egret receipt key"
	! "${AS_TEST_USER[@]}" ls "$state/receipts" >/dev/null 2>&1 ||
		fail "the caller listed egretd's kept receipts"
	# A file the caller may not write, and a symlink: refused, unchanged.
	echo keep >"$TDIR/root-owned" && chmod 644 "$TDIR/root-owned" && chown root "$TDIR/root-owned"
	via --receipt "$TDIR/root-owned" -- true
	[ "$RC" != 0 ] || fail "a receipt into a file the caller cannot write $(said)"
	assert_eq keep "$(cat "$TDIR/root-owned")" "the file the caller cannot write"
	ln -sf "$TDIR/root-owned" "$TDIR/link.json"
	via --receipt "$TDIR/link.json" -- true
	[ "$RC" != 0 ] || fail "a receipt through a symlink $(said)"
	assert_eq keep "$(cat "$TDIR/root-owned")" "the symlink's target"
	egretd_stop
}
