# shellcheck shell=bash
# shellcheck disable=SC2016,SC2034 # $1 in single quotes is the inner shell's; EGRETD_PID is egretd_stop's
# test_request.sh - `egret request` from inside an attempt (issue 43;
# attempt/inbox.h, requests/ask.h): sourced by run.sh. The red-team rows
# (another attempt's process, a flood, escapes) are in
# tests/redteam/asks.sh.

# request_bin: an egret binary COMMAND can run, where it can see it
# (through egretd its /tmp is private): TDIR, the caller's directory.
request_bin() {
	cp "$1" "$TDIR/egret-req" && chmod 755 "$TDIR/egret-req" && echo "$TDIR/egret-req"
}

# request_script: COMMAND's asks, one answer line and status each: a name
# with two ports, an address, a wildcard, no reason, and (as the agent
# could try) approving from inside.
request_script() {
	write_script asks.sh <<'EOF2'
E=$1
ask() { out=$("$E" request "$@" 2>&1); echo "$? $(printf '%s' "$out" | head -n 1)"; }
echo "env ${EGRET_REQUEST:-unset}"
ask files.example.net:443,8443 --why "fetch the release tarball"
ask 192.0.2.7:5432 --why "the test database"
ask '*.example.com' --why "all of them"
ask pypi.org --why ""
ask pypi.org
"$E" requests approve 1 --state-dir "$2" >/dev/null 2>&1; echo "approve $?"
EOF2
}

request_expect_answers() {
	local path
	path=$(awk '$1 == "env" { print $2 }' <<<"$OUT")
	[[ $path == /run/egret-limits/*/request.sock ]] ||
		fail "\$EGRET_REQUEST in COMMAND's environment: '$path' $(said)"
	[ ! -e "$path" ] || fail "the request socket $path outlived its attempt"
	assert_eq "0 pending" "$(sed -n 2p <<<"$OUT" | cut -d: -f1)" "a name with two ports $(said)"
	assert_eq "0 pending" "$(sed -n 3p <<<"$OUT" | cut -d: -f1)" "an address $(said)"
	assert_eq "1 refused: ask for a name, not a wildcard ('*.example.com')" \
		"$(sed -n 4p <<<"$OUT")" "a wildcard $(said)"
	assert_eq "1 refused: say why: --why TEXT is required" "$(sed -n 5p <<<"$OUT")" \
		"an empty reason $(said)"
	assert_eq "2" "$(sed -n 6p <<<"$OUT" | cut -d' ' -f1)" "no --why: usage $(said)"
	[ "$(awk '$1 == "approve" { print $2 }' <<<"$OUT")" != 0 ] ||
		fail "COMMAND approved a request from inside $(said)"
}

# request_expect_store DIR REPO: the three requests pending in REPO's
# store at DIR, each with the agent's reason, none decided.
request_expect_store() {
	local list
	list=$("$EGRET" requests list --all --json --state-dir "$1") || fail "requests list: $list"
	assert_eq "$2 files.example.net 443 tcp pending fetch the release tarball
$2 files.example.net 8443 tcp pending fetch the release tarball
$2 192.0.2.7 5432 tcp pending the test database" \
		"$(jq -r '.requests[] | "\(.repo) \(.target) \(.port) \(.proto) \(.status) \(.why)"' <<<"$list" | sort -k3,3n -k2,2 | sort -s -k2,2r)" \
		"the agent's requests in the store"
	[ -z "$(find "$1" -name '*approv*' -newer "$TDIR/asks.sh" 2>/dev/null)" ] ||
		fail "an approvals file appeared: $(find "$1" -name '*approv*')"
}

# Root's egret: COMMAND asks for two hosts with its reasons; each is a
# pending request with them; a wildcard, a missing reason and approving
# from inside are refused; the manifest says how to ask.
t_request_inband() {
	local bin script
	bin=$(request_bin "$EGRET")
	script=$(request_script)
	attempt --user "$TEST_USER" --repo owner/app --state-dir "$TDIR/state" \
		-- sh -c 'sh "$1" "$2" "$3" && cp "$EGRET_LIMITS_JSON" "$4/limits.json" &&
			cp "$EGRET_LIMITS" "$4/limits.txt"' sh "$script" "$bin" "$TDIR/state" "$TDIR"
	assert_eq 0 "$RC" "egret exit status $(said)"
	request_expect_answers
	request_expect_store "$TDIR/state" owner/app
	assert_eq '"EGRET_REQUEST" 10 64' "$(jq -c '.request.env, .request.per_minute, .request.per_attempt' \
		"$TDIR/limits.json" | tr '\n' ' ' | sed 's/ $//')" "the manifest's request section"
	grep -q 'egret request NAME\[:PORTS\] --why' "$TDIR/limits.txt" ||
		fail "the plain-text manifest does not say how to ask: $(cat "$TDIR/limits.txt")"
	grep -q "in-band requests: 2 filed; refused 0 over the rate, 0 from outside the attempt, 2 malformed" <<<"$ERR" ||
		fail "egret's count of the asks $(said)"

	# Without a repository there is nowhere to file a request: no socket.
	attempt --user "$TEST_USER" -- sh -c 'echo "${EGRET_REQUEST:-unset}"; "$1" request x.example --why y; echo $?' sh "$bin"
	assert_eq "unset
2" "$OUT" "an attempt without --repo $(said)"
}

# Through egretd the same, with egret-client inside the attempt: the
# requests land in egretd's store and on its stdout's request lines.
t_request_egretd() {
	local bin script
	bin=$(request_bin "$(dirname "$EGRET")/egret-client")
	script=$(request_script)
	egretd_config
	"${WORLD_IN_CLIENT[@]}" "$(dirname "$EGRET")/egretd" --config "$EGRETD_CONF" \
		>"$TDIR/egretd.out" 2>"$TDIR/egretd.log" &
	EGRETD_PID=$!
	egretd_wait_ready
	via --repo octo/app -- sh "$script" "$bin" "/run/egretd-test-$$/state"
	assert_eq 0 "$RC" "through egretd $(said)"
	request_expect_answers
	wait_until 20 grep -q '"why":"the test database"' "$TDIR/egretd.out" ||
		fail "no request line with the reason on egretd's stdout: $(cat "$TDIR/egretd.out")"
	request_expect_store "/run/egretd-test-$$/state" octo/app
	egretd_stop
}

# egretd re-adopting a running attempt binds its request socket again: an
# ask after egretd died and came back is filed, with its reason. The
# receipt the caller asked for is kept by the re-adopter (which does not
# hold the caller's file), says it was re-adopted, and verifies.
t_request_readopt() {
	local bin cpid
	bin=$(request_bin "$(dirname "$EGRET")/egret-client")
	egretd_start
	timeout -k 5 120 "${WORLD_IN_CLIENT[@]}" "${AS_TEST_USER[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$EGRETD_SOCK" --repo octo/app --receipt "$TDIR/rq.receipt" -- sh -c \
		'touch "$1/rq.started"; i=0; while [ ! -e "$1/rq.go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
		"$2" request after.example:443 --why "asked after a restart"' sh "$TDIR" "$bin" \
		>"$TDIR/rq.out" 2>&1 &
	cpid=$!
	wait_for_file "$TDIR/rq.started" 20 || fail "COMMAND never started: $(cat "$TDIR/rq.out")"
	egretd_kill_all
	egretd_start
	touch "$TDIR/rq.go"
	reap "$cpid" 60
	assert_eq 0 "$REAPED" "the ask after re-adoption $(cat "$TDIR/rq.out" "$TDIR/egretd.log" 2>/dev/null)"
	grep -q '^pending: ' "$TDIR/rq.out" || fail "the answer after re-adoption: $(cat "$TDIR/rq.out")"
	wait_until 10 sh -c '"$1" requests list --json --state-dir "$2" | grep -q "asked after a restart"' \
		sh "$EGRET" "/run/egretd-test-$$/state" ||
		fail "the ask after re-adoption is not in egretd's store"
	local kept j
	kept=$(ls /run/egretd-test-$$/state/receipts/*.json 2>/dev/null)
	assert_eq 1 "$(wc -w <<<"$kept")" "receipts kept by the re-adopting egretd [$kept]"
	j=$("$EGRET" receipt verify --state-dir "/run/egretd-test-$$/state" "$kept" 2>"$TDIR/v.err") ||
		fail "the re-adopted attempt's receipt: $(cat "$TDIR/v.err")"
	assert_eq "true false 0" "$(jq -r '"\(.readopted) \(.complete) \(.exit.status)"' <<<"$j")" \
		"the re-adopted attempt's receipt"
	egretd_stop
}

# egretd serving a container: the caller in mounts of its own, with a /run
# of its own (a tmpfs, as a container's). COMMAND still finds its
# manifest, its feed and its request socket at the paths its environment
# names, lists no other attempt's, changes none of it; a refusal is in the
# feed and an ask is filed.
t_limits_container() {
	local bin cmd inner sockdir=$TDIR/sockdir
	bin=$(request_bin "$(dirname "$EGRET")/egret-client")
	egretd_start
	mkdir -p "$sockdir"
	cmd=$(write_script ctr-limits.sh <<'SH'
d=$1 bin=$2
out=$d/ctr
cp "$EGRET_LIMITS" "$out.limits.txt" && cp "$EGRET_LIMITS_JSON" "$out.limits.json" || echo "no manifest"
if ls /run/egret-limits >/dev/null 2>&1; then echo "listed"; else echo "not listed"; fi
if sh -c ': >"$1"' - "$EGRET_LIMITS" 2>/dev/null; then echo "manifest written"; else echo "manifest refused"; fi
python3 -c 'import socket; s=socket.socket(); s.settimeout(3)
try: s.connect(("203.0.113.11", 80))
except OSError as e: print("connect", e.errno)'
i=0; while [ $i -lt 1000 ] && ! grep -q '"kind":"connect"' "$EGRET_DENIALS"; do sleep 0.001; i=$((i + 1)); done
cp "$EGRET_DENIALS" "$out.denials"
"$bin" request ctr.example:443 --why "asked from a container"
SH
)
	# The container: its own mounts and /run (a tmpfs), egretd's socket
	# brought in by a bind mount made before /run was covered.
	inner=$(write_script ctr-run.sh <<'SH'
set -e
run_dir=$1 sockdir=$2; shift 2
mount --bind "$run_dir" "$sockdir"
mount -t tmpfs -o mode=755 tmpfs /run
set +e
"$@"
SH
)
	timeout -k 5 90 "${WORLD_IN_CLIENT[@]}" unshare --mount sh "$inner" "$(dirname "$EGRETD_SOCK")" \
		"$sockdir" "${AS_TEST_USER[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$TDIR" \
		"$EGRET" run --via "$sockdir/$(basename "$EGRETD_SOCK")" --repo octo/app -- \
		sh "$cmd" "$TDIR" "$bin" >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_eq 0 "$RC" "an attempt of a container's caller $(said)"
	assert_eq "not listed
manifest refused
connect 111" "$(sed -n 1,3p <<<"$OUT")" "COMMAND's view of its limits in the container $(said)"
	grep -q '^pending: ' <<<"$OUT" || fail "the ask from the container $(said)"
	assert_eq '"octo/app" true' "$(jq -c '.repo, .requests' "$TDIR/ctr.limits.json" | tr '\n' ' ' | sed 's/ $//')" \
		"the manifest COMMAND read in the container"
	assert_eq '203.0.113.11 80 no-entry' \
		"$(jq -r 'select(.kind == "connect") | "\(.address) \(.port) \(.reason)"' "$TDIR/ctr.denials")" \
		"the container's feed"
	wait_until 10 sh -c '"$1" requests list --json --state-dir "$2" | grep -q "asked from a container"' \
		sh "$EGRET" "/run/egretd-test-$$/state" || fail "the container's ask is not in egretd's store"
	umount "$sockdir" 2>/dev/null
	egretd_stop
}
