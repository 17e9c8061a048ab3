# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016,SC2034
# test_budgets.sh - bytes per destination and upload budgets
# (docs/BUDGETS.md): the far side's own byte count is the evidence.
#
# Sourced by run.sh. Servers: tests/helpers/upload (serve) in the world,
# each test on ports of its own (a server left by a failed test cannot
# take the next test's port); every line it logs is one connection:
# "from PEER token=TOKEN received=N".

U() { echo "$HELPERS/upload"; }

# Start `upload serve` on ADDR PORT in the world, logging to LOG (SEND: bytes
# to send each client); the pid goes to BUDGET_SERVERS.
budget_serve() {	# ADDR PORT LOG [SEND]
	local out=$TDIR/serve-$2-${1//[:\[\]]/_}.out
	# nsenter execs in place: $! is the server itself.
	nsenter --net="/run/netns/$WORLD_NS" -- "$(U)" serve "$@" >"$out" 2>&1 &
	BUDGET_SERVERS+=("$!")
	wait_until 10 grep -qs listening "$out" || fail "upload serve $1 $2 did not start: $(cat "$out")"
}

# Each connection's server process logs when its connection ends: wait
# for them (bounded), then stop the servers.
budget_servers_stop() {
	local p
	for p in "${BUDGET_SERVERS[@]}"; do
		wait_until 25 eval '[ -z "$(pgrep -P '"$p"')" ]' || note "a server of $p is still serving"
		pkill -P "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	for p in "${BUDGET_SERVERS[@]}"; do wait "$p" 2>/dev/null; done
	BUDGET_SERVERS=()
}

# Bytes the servers logged for connections whose token starts with TOKEN.
received() {	# LOG TOKEN
	awk -v t="token=$2" 'index($0, t) { split($NF, a, "="); s += a[2] } END { print s + 0 }' "$1"
}

# Connections the servers logged for TOKEN.
received_conns() {	# LOG TOKEN
	grep -c "token=$2" "$1" 2>/dev/null || true
}

# The JSON log's destination record for NAME, as "sent received conns budget over".
dest_record() {	# LOG NAME
	jq -r --arg n "$2" 'select(.kind == "destination" and .name == $n) |
		"\(.sent) \(.received) \(.connections) \(.budget) \(.over_budget)"' "$1"
}

BUDGET_SERVERS=()
KIB=1024
MIB=$((1024 * 1024))

# 1. A learned name with a 1 MiB budget: 600 KiB in one connection arrive
# whole; a following 4 MiB in a second is cut - the server gets at most
# the budget in all, the client's send fails - and a third connect is
# refused. The summary and the JSON log show the name's figures.
t_budget_upload() {
	local tok script log=$TDIR/srv.log id=$ID_PREFIX-bu a b total rec
	tok=$(token bu)
	budget_serve 203.0.113.10 9001 "$log"
	budget_serve 2001:db8:2::10 9001 "$log"
	script=$(write_script cmd.sh <<'EOF'
U=$1 T=$2
echo "first: $("$U" send github.com 9001 "$T-1" 614400)"
echo "second: $("$U" send github.com 9001 "$T-2" 4194304)"
echo "third: $("$U" send github.com 9001 "$T-3" 100)"
EOF
)
	attempt --id "$id" --user "$TEST_USER" --dns-upstream "$WORLD_DNS" \
		--allow github.com:9001 --upload-limit 1M --log "$TDIR/events.json" \
		-- sh "$script" "$(U)" "$tok"
	budget_servers_stop
	assert_eq 0 "$RC" "egret exit status $(said)"
	a=$(sed -n 's/^first: //p' <<<"$OUT")
	b=$(sed -n 's/^second: //p' <<<"$OUT")
	assert_eq "ok sent=614400" "$a" "600 KiB under the budget $(said)"
	assert_eq 614400 "$(received "$log" "$tok-1")" "the server's count of the first upload"
	[[ $b == err\ * ]] || fail "the 4 MiB upload past the budget did not fail: '$b' $(said)"
	total=$(received "$log" "$tok-")
	[ "$total" -le "$MIB" ] || fail "the server received $total bytes in all, over the 1 MiB budget"
	[ "$(received "$log" "$tok-2")" -gt 0 ] ||
		note "the second upload's first segment was already over (allowed: a segment is dropped whole): $(cat "$log")"
	assert_eq "err ECONNREFUSED sent=0 failed=1" "$(sed -n 's/^third: //p' <<<"$OUT")" \
		"a connect to the name over its budget $(said)"
	assert_eq 0 "$(received_conns "$log" "$tok-3")" "connections of the third upload at the server"
	grep -qE '^egret:   github\.com: sent [0-9.]+ KiB, received [0-9]+ B, 2 connections \(upload budget 1\.0 MiB, exceeded: sends refused\)$' <<<"$ERR" ||
		fail "summary: want 'github.com: sent ... KiB, received N B, 2 connections (upload budget 1.0 MiB, exceeded: sends refused)' $(said)"
	rec=$(dest_record "$TDIR/events.json" github.com)
	read -r s r c bud over <<<"$rec"
	[ -n "$rec" ] || fail "no destination record for github.com in the log: $(cat "$TDIR/events.json")"
	[ "$s" -ge "$total" ] && [ "$s" -le "$MIB" ] ||
		fail "the log's sent=$s: want between the server's $total and the budget"
	assert_eq "2 $MIB true" "$c $bud $over" "the log's connections, budget, over_budget"
	jq -se --argjson b "$MIB" 'map(select(.kind == "egress" and .reason == "budget" and
			       .destination == "github.com" and .budget == $b and
			       .sent <= $b)) | length > 0' \
		"$TDIR/events.json" >/dev/null ||
		fail "no budget event naming github.com in the log: $(grep budget "$TDIR/events.json")"
	# A budget's refusals are no destination to allow: egret suggest
	# leaves them out.
	! "$EGRET" suggest "$TDIR/events.json" 2>&1 | grep -q github.com ||
		fail "egret suggest proposes github.com from its budget refusals: $("$EGRET" suggest "$TDIR/events.json" 2>&1)"
}

# 2. The same budget over 50 connections at once, to both addresses of the
# name (IPv4 and IPv6 in turn): still at most 1 MiB at the servers.
t_budget_parallel() {
	local tok script log=$TDIR/srv.log res total c4 c6
	tok=$(token bp)
	budget_serve 203.0.113.10 9002 "$log"
	budget_serve 2001:db8:2::10 9002 "$log"
	script=$(write_script cmd.sh <<'EOF'
echo "many: $("$1" send github.com 9002 "$2" 65536 50)"
EOF
)
	attempt --user "$TEST_USER" --dns-upstream "$WORLD_DNS" --allow github.com:9002 \
		--upload-limit 1M -- sh "$script" "$(U)" "$tok"
	budget_servers_stop
	assert_eq 0 "$RC" "egret exit status $(said)"
	res=$(sed -n 's/^many: //p' <<<"$OUT")
	[[ $res == err\ * ]] || fail "50 x 64 KiB past a 1 MiB budget all succeeded: '$res' $(said)"
	total=$(received "$log" "$tok")
	[ "$total" -le "$MIB" ] || fail "the servers received $total bytes over 50 connections, over the 1 MiB budget"
	[ "$total" -ge $((512 * KIB)) ] || fail "the servers received only $total bytes: the budget was not used"
	c4=$(grep -c "^from 192.0.2.2 token=$tok" "$log" || true)
	c6=$(grep -c "^from 2001:db8:1::2 token=$tok" "$log" || true)
	[ "$c4" -gt 0 ] && [ "$c6" -gt 0 ] || fail "want uploads over IPv4 and IPv6, got $c4 and $c6"
}

# fetch_8mib TOKEN [EGRET-ARGS...]: an attempt that downloads 8 MiB from
# 203.0.113.10:9003, logged to $TDIR/events.json; it must succeed whole.
fetch_8mib() {
	local tok=$1 script log=$TDIR/srv.log
	shift
	budget_serve 203.0.113.10 9003 "$log" $((8 * MIB))
	script=$(write_script cmd.sh <<'EOF'
echo "fetch: $("$1" fetch 203.0.113.10 9003 "$2")"
EOF
)
	attempt --user "$TEST_USER" --allow 203.0.113.10:9003 "$@" --log "$TDIR/events.json" \
		-- sh "$script" "$(U)" "$tok"
	budget_servers_stop
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_eq "ok received=$((8 * MIB))" "$(sed -n 's/^fetch: //p' <<<"$OUT")" "8 MiB download $(said)"
}

# 3. Downloads are not limited: 8 MiB from a name with a 1 MiB budget, and
# the received bytes are counted.
t_budget_download() {
	fetch_8mib "$(token bd)" --upload-limit 1M
	read -r s r c _ over <<<"$(dest_record "$TDIR/events.json" 203.0.113.10:9003)"
	[ "${r:-0}" -ge $((8 * MIB)) ] || fail "the log's received=$r for 203.0.113.10:9003: want 8 MiB or more"
	assert_eq "1 false" "$c $over" "the log's connections and over_budget"
	grep -qE '^egret:   203\.0\.113\.10:9003: sent [0-9]+ B, received 8\.0 MiB, 1 connection \(upload budget 1\.0 MiB\)$' <<<"$ERR" ||
		fail "summary: want '203.0.113.10:9003: sent N B, received 8.0 MiB, 1 connection (upload budget 1.0 MiB)' $(said)"
}

# 3b. Without a budget a connection keeps no accounting state of its own
# (docs/BUDGETS.md, "Counting without socket storage"): what it received
# is read from TCP at its close - 8 MiB, its one connection, and the
# request it sent, each counted once.
t_budget_download_bare() {
	fetch_8mib "$(token bdb)"
	read -r s r c bud over <<<"$(dest_record "$TDIR/events.json" 203.0.113.10:9003)"
	[ "${r:-0}" -ge $((8 * MIB)) ] && [ "${r:-0}" -le $((8 * MIB + 1)) ] ||
		fail "the log's received=$r for 203.0.113.10:9003: want 8 MiB (and the far side's FIN)"
	[ "${s:-0}" -gt 0 ] && [ "${s:-0}" -lt 4096 ] || fail "the log's sent=$s: want the request alone"
	assert_eq "1 null false" "$c $bud $over" "the log's connections, budget, over_budget"
	grep -qE '^egret:   203\.0\.113\.10:9003: sent [0-9]+ B, received 8\.0 MiB, 1 connection$' <<<"$ERR" ||
		fail "summary: want '203.0.113.10:9003: sent N B, received 8.0 MiB, 1 connection' $(said)"
}

# 4. A static-address rule and a learned name each have a budget of their
# own: 900 KiB to each, both under 1 MiB, both arrive whole.
t_budget_per_destination() {
	local tok script log=$TDIR/srv.log
	tok=$(token bpd)
	budget_serve 203.0.113.10 9004 "$log"
	budget_serve 2001:db8:2::10 9004 "$log"
	budget_serve 203.0.113.11 9004 "$log"
	script=$(write_script cmd.sh <<'EOF'
echo "name: $("$1" send github.com 9004 "$2-name" 921600)"
echo "static: $("$1" send 203.0.113.11 9004 "$2-static" 921600)"
EOF
)
	attempt --user "$TEST_USER" --dns-upstream "$WORLD_DNS" --allow github.com:9004 \
		--allow 203.0.113.11:9004 --upload-limit 1M --log "$TDIR/events.json" \
		-- sh "$script" "$(U)" "$tok"
	budget_servers_stop
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_eq "ok sent=921600" "$(sed -n 's/^name: //p' <<<"$OUT")" "900 KiB to the name $(said)"
	assert_eq "ok sent=921600" "$(sed -n 's/^static: //p' <<<"$OUT")" "900 KiB to the static rule $(said)"
	assert_eq 921600 "$(received "$log" "$tok-name")" "the server's count for the name"
	assert_eq 921600 "$(received "$log" "$tok-static")" "the server's count for the static rule"
	read -r s _ <<<"$(dest_record "$TDIR/events.json" github.com)"
	assert_eq 921600 "$s" "the log's sent for github.com"
	read -r s _ <<<"$(dest_record "$TDIR/events.json" 203.0.113.11:9004)"
	assert_eq 921600 "$s" "the log's sent for 203.0.113.11:9004"
}

# 5. Without a budget, everything is counted and nothing is cut; a size
# egret cannot read is refused with one line.
t_budget_accounting_only() {
	local tok script log=$TDIR/srv.log
	tok=$(token bao)
	budget_serve 203.0.113.10 9005 "$log"
	script=$(write_script cmd.sh <<'EOF'
echo "big: $("$1" send 203.0.113.10 9005 "$2" 3145728 3)"
EOF
)
	attempt --user "$TEST_USER" --allow 203.0.113.10:9005 --log "$TDIR/events.json" \
		-- sh "$script" "$(U)" "$tok"
	budget_servers_stop
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_eq "ok sent=9437184" "$(sed -n 's/^big: //p' <<<"$OUT")" "3 x 3 MiB, no budget $(said)"
	assert_eq 9437184 "$(received "$log" "$tok")" "the server's count"
	read -r s r c bud over <<<"$(dest_record "$TDIR/events.json" 203.0.113.10:9005)"
	assert_eq "9437184 3 null false" "$s $c $bud $over" "the log's sent, connections, budget, over_budget"
	attempt --user "$TEST_USER" --allow 203.0.113.10:9005 --upload-limit 1Q -- touch "$TDIR/ran"
	assert_refused "--upload-limit 1Q" "$TDIR/ran"
	assert_eq "egret: --upload-limit 1Q: want a size: bytes, or a number with K, M or G (1M, 512K)" \
		"$ERR" "the one line $(said)"
}

# 6. Budgets from the policy: a host entry's own (256 KiB under a top-level
# 1 MiB) and a cidrs item's (512 KiB), each holding at the far side; a
# budget the entries do not lower is the top level's.
t_budget_policy() {
	local tok script log=$TDIR/srv.log policy
	tok=$(token bpol)
	budget_serve 203.0.113.10 9006 "$log"
	budget_serve 2001:db8:2::10 9006 "$log"
	budget_serve 203.0.113.11 9006 "$log"
	budget_serve 198.51.100.7 9006 "$log"
	policy=$(policy_path policy.yaml)
	cat >"$policy" <<'EOF'
upload_limit: 1M
hosts: [{host: github.com, ports: [9006], upload_limit: 256K}]
cidrs:
  - {cidr: "203.0.113.11", ports: [9006], upload_limit: 512K}
  - "198.51.100.7:9006"
EOF
	script=$(write_script cmd.sh <<'EOF'
echo "name: $("$1" send github.com 9006 "$2-name" 307200)"
echo "static1: $("$1" send 203.0.113.11 9006 "$2-static1" 409600)"
echo "static2: $("$1" send 203.0.113.11 9006 "$2-static2" 204800)"
echo "top: $("$1" send 198.51.100.7 9006 "$2-top" 921600)"
EOF
)
	attempt --user "$TEST_USER" --dns-upstream "$WORLD_DNS" --policy "$policy" \
		--log "$TDIR/events.json" -- sh "$script" "$(U)" "$tok"
	budget_servers_stop
	assert_eq 0 "$RC" "egret exit status $(said)"
	[[ $(sed -n 's/^name: //p' <<<"$OUT") == err\ * ]] ||
		fail "300 KiB to github.com past its entry's 256 KiB did not fail $(said)"
	[ "$(received "$log" "$tok-name")" -le 262144 ] ||
		fail "github.com's server received $(received "$log" "$tok-name") bytes, over 256 KiB"
	assert_eq "ok sent=409600" "$(sed -n 's/^static1: //p' <<<"$OUT")" "400 KiB to the 512 KiB item $(said)"
	[[ $(sed -n 's/^static2: //p' <<<"$OUT") == err\ * ]] ||
		fail "200 KiB more to the 512 KiB item did not fail $(said)"
	[ "$(received "$log" "$tok-static")" -le 524288 ] ||
		fail "203.0.113.11 received $(received "$log" "$tok-static") bytes, over 512 KiB"
	assert_eq "ok sent=921600" "$(sed -n 's/^top: //p' <<<"$OUT")" "900 KiB under the top level's 1 MiB $(said)"
	read -r _ _ _ bud _ <<<"$(dest_record "$TDIR/events.json" github.com)"
	assert_eq 262144 "$bud" "the log's budget for github.com"
	read -r _ _ _ bud _ <<<"$(dest_record "$TDIR/events.json" 198.51.100.7:9006)"
	assert_eq "$MIB" "$bud" "the log's budget for 198.51.100.7:9006"
}

# 7. Through egretd: the caller's `upload_limit:` in egretd.yaml is a
# ceiling its request's --upload-limit can lower, never raise.
t_egretd_upload_limit() {
	local tok log=$TDIR/srv.log
	tok=$(token beg)
	budget_serve 203.0.113.10 9007 "$log"
	egretd_start "  - user: $TEST_USER
    allow: true
    upload_limit: 256K"
	via --allow 203.0.113.10:9007 --upload-limit 10M -- "$(U)" send 203.0.113.10 9007 "$tok-a" 409600
	[[ $OUT == err\ * ]] || fail "400 KiB under a 256 KiB ceiling, asked 10M, did not fail $(said)"
	via --allow 203.0.113.10:9007 --upload-limit 100K -- "$(U)" send 203.0.113.10 9007 "$tok-b" 204800
	[[ $OUT == err\ * ]] || fail "200 KiB past a request's own 100 KiB did not fail $(said)"
	via --allow 203.0.113.10:9007 -- "$(U)" send 203.0.113.10 9007 "$tok-c" 204800
	assert_eq "ok sent=204800" "$OUT" "200 KiB under the ceiling $(said)"
	egretd_stop
	budget_servers_stop
	[ "$(received "$log" "$tok-a")" -le 262144 ] ||
		fail "the server received $(received "$log" "$tok-a") bytes past the caller's 256 KiB ceiling"
	[ "$(received "$log" "$tok-b")" -le 102400 ] ||
		fail "the server received $(received "$log" "$tok-b") bytes past the request's 100 KiB"
	assert_eq 204800 "$(received "$log" "$tok-c")" "the server's count under the ceiling"
}

# 8. A pinned connection counts against the name its TLS hello (or HTTP
# request) named, not the name that last taught the shared address: two
# allowed names at 198.51.100.7, denied.test learned last.
t_budget_pinned_attribution() {
	local tok script c d
	tok=$(token bpa)
	script=$(write_script cmd.sh <<'EOF'
P=$1 T=$2
getent ahostsv4 cdn.example.net >/dev/null
getent ahostsv4 denied.test >/dev/null
echo "tls: $(PROBE_SNI=cdn.example.net "$P" tcp 198.51.100.7 443 "$T-tls")"
echo "http: $(PROBE_HTTP=cdn.example.net "$P" tcp 198.51.100.7 80 "$T-http")"
EOF
)
	attempt --user "$TEST_USER" --dns-upstream "$WORLD_DNS" --allow cdn.example.net \
		--allow denied.test --log "$TDIR/events.json" -- sh "$script" "$P" "$tok"
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_eq ok "$(sed -n 's/^tls: //p' <<<"$OUT")" "TLS naming cdn.example.net $(said)"
	assert_eq ok "$(sed -n 's/^http: //p' <<<"$OUT")" "HTTP naming cdn.example.net $(said)"
	read -r s _ c _ <<<"$(dest_record "$TDIR/events.json" cdn.example.net)"
	[ "${s:-0}" -gt 0 ] && [ "${c:-0}" -eq 2 ] ||
		fail "cdn.example.net: want both connections and their bytes, got sent=$s connections=$c: $(grep destination "$TDIR/events.json")"
	read -r d _ c _ <<<"$(dest_record "$TDIR/events.json" denied.test)"
	assert_eq "0 0" "$d $c" "denied.test (taught the address last; named by no hello): sent, connections"
}

# 9. A refusal for the budget files a request of the attempt's repository
# for the name, proto "upload"; approving it is refused with one line (a
# budget is the policy's), denying it closes it. The repository's section
# of the policy gives it a larger budget: then the same upload arrives.
t_budget_request() {
	local tok script log=$TDIR/srv.log policy id out
	tok=$(token brq)
	budget_serve 203.0.113.10 9008 "$log"
	budget_serve 2001:db8:2::10 9008 "$log"
	policy=$(policy_path policy.yaml)
	cat >"$policy" <<'EOF'
upload_limit: 256K
hosts: ["github.com:9008"]
repos:
  acme/big:
    upload_limit: 1M
EOF
	script=$(write_script cmd.sh <<'EOF'
echo "up: $("$1" send github.com 9008 "$2" 512000)"
EOF
)
	attempt_bare --policy "$policy" --state-dir "$TDIR/state" --repo acme/app \
		--user "$TEST_USER" --dns-upstream "$WORLD_DNS" -- sh "$script" "$(U)" "$tok-app"
	[[ $(sed -n 's/^up: //p' <<<"$OUT") == err\ * ]] ||
		fail "500 KiB past acme/app's 256 KiB did not fail $(said)"
	id=$("$EGRET" requests list --json --state-dir "$TDIR/state" | jq -r \
		'.requests[] | select(.repo == "acme/app" and .target == "github.com" and .proto == "upload") | .id')
	[ -n "$id" ] || fail "no upload request for github.com: $("$EGRET" requests list --state-dir "$TDIR/state")"
	out=$("$EGRET" requests approve "$id" --state-dir "$TDIR/state" --policy "$policy" 2>&1) &&
		fail "approving an upload request succeeded: $out"
	[[ $out == *"asks for a larger upload budget for github.com: raise it in the policy"* ]] ||
		fail "approve: want the one line naming the policy, got: $out"
	"$EGRET" requests deny "$id" --state-dir "$TDIR/state" >/dev/null 2>&1 ||
		fail "denying the upload request failed"
	attempt_bare --policy "$policy" --state-dir "$TDIR/state" --repo acme/big \
		--user "$TEST_USER" --dns-upstream "$WORLD_DNS" -- sh "$script" "$(U)" "$tok-big"
	budget_servers_stop
	assert_eq "ok sent=512000" "$(sed -n 's/^up: //p' <<<"$OUT")" "the same upload, acme/big's 1 MiB $(said)"
	[ "$(received "$log" "$tok-app")" -le 262144 ] ||
		fail "acme/app's server got $(received "$log" "$tok-app") bytes, over 256 KiB"
	assert_eq 512000 "$(received "$log" "$tok-big")" "acme/big's upload at the server"
}

# 10. Every name a wildcard allows counts against the wildcard: a COMMAND
# that makes up names below it (a.tunnel.test, b.tunnel.test: the world's
# DNS answers any) gets one budget for all of them, not one per name.
t_budget_wildcard() {
	local tok script log=$TDIR/srv.log total
	tok=$(token bwc)
	budget_serve 198.51.100.7 9009 "$log"
	script=$(write_script cmd.sh <<'EOF'
echo "a: $("$1" send a.tunnel.test 9009 "$2-a" 614400)"
echo "b: $("$1" send b.tunnel.test 9009 "$2-b" 614400)"
EOF
)
	attempt --user "$TEST_USER" --dns-upstream "$WORLD_DNS" --allow '*.tunnel.test:9009' \
		--upload-limit 1M --log "$TDIR/events.json" -- sh "$script" "$(U)" "$tok"
	budget_servers_stop
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_eq "ok sent=614400" "$(sed -n 's/^a: //p' <<<"$OUT")" "600 KiB to a.tunnel.test $(said)"
	[[ $(sed -n 's/^b: //p' <<<"$OUT") == err\ * ]] ||
		fail "600 KiB more to b.tunnel.test, past the wildcard's 1 MiB, did not fail $(said)"
	total=$(received "$log" "$tok-")
	[ "$total" -le "$MIB" ] || fail "the server received $total bytes under *.tunnel.test, over 1 MiB"
	read -r s _ c _ <<<"$(dest_record "$TDIR/events.json" '*.tunnel.test')"
	[ "${c:-0}" -eq 2 ] || fail "want one destination *.tunnel.test with both connections: $(grep destination "$TDIR/events.json")"
}
