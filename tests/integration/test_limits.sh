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

# names_flood_script: COMMAND's side of a flood of refused names: N
# lookups of distinct names below LABEL.example, one at a time (python3
# names-flood.py N LABEL); prints the feed's size, then its last line.
names_flood_script() {
	write_script names-flood.py <<'EOF2'
import os, socket, struct, sys
n, label = int(sys.argv[1]), sys.argv[2].encode()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for i in range(n):
    q = struct.pack(">HHHHHH", i & 0xffff, 0x0100, 1, 0, 0, 0)
    for part in (b"n%d" % i, label, b"example"):
        q += bytes([len(part)]) + part
    q += b"\x00" + struct.pack(">HH", 1, 1)
    s.sendto(q, ("198.51.100.53", 53))
    s.recv(512)
print(os.path.getsize(os.environ["EGRET_DENIALS"]))
print(open(os.environ["EGRET_DENIALS"]).read().splitlines()[-1])
EOF2
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

# The denial feed ($EGRET_DENIALS): each refusal - a name, a TCP connect, a
# UDP datagram - is a line with its reason, in COMMAND's reach as it comes
# (measured from inside, after the call returned); COMMAND cannot write to
# it. On a quiet machine a line is there in a few ms; the bound is
# FEED_WITHIN_MS, a margin for the script's own forks on a loaded 2-CPU
# machine (102 ms was seen under a burst at load average 30), and below
# EVENTS_REPEATS_MS (1 s): lines held back to the repeats timer fail it.
FEED_WITHIN_MS=500
t_limits_feed() {
	local script
	script=$(write_script feed.sh <<'EOF2'
P=$1
now() { date +%s%N; }
# seen KIND BEFORE T0: a line of KIND beyond the BEFORE there were, and
# how many ms after T0 it was there (at most 1 s of looking).
seen() {
	local i=0
	while [ $i -lt 1000 ]; do
		if [ "$(grep -c "\"kind\":\"$1\"" "$EGRET_DENIALS")" -gt "$2" ]; then
			echo "$1 $(( ($(now) - $3) / 1000000 ))"
			return
		fi
		sleep 0.001; i=$((i + 1))
	done
	echo "$1 never"
}
n=$(grep -c '"kind":"dns"' "$EGRET_DENIALS"); getent ahostsv4 evil.example >/dev/null
t=$(now); seen dns "$n" "$t"
n=$(grep -c '"kind":"connect"' "$EGRET_DENIALS"); "$P" tcp 203.0.113.11 80 x >/dev/null 2>&1
t=$(now); seen connect "$n" "$t"
n=$(grep -c '"kind":"sendmsg"' "$EGRET_DENIALS"); "$P" udp 203.0.113.11 9999 x >/dev/null 2>&1
t=$(now); seen sendmsg "$n" "$t"
if echo x >>"$EGRET_DENIALS" 2>/dev/null; then echo "feed writable"; else echo "feed refused"; fi
cp "$EGRET_DENIALS" "$2/denials.jsonl"
EOF2
)
	attempt --user "$TEST_USER" --allow 203.0.113.10:80 --dns-upstream "$WORLD_DNS" \
		-- sh "$script" "$P" "$TDIR"
	assert_eq 0 "$RC" "egret exit status $(said)"
	local kind ms
	for kind in dns connect sendmsg; do
		ms=$(awk -v k="$kind" '$1 == k { print $2 }' <<<"$OUT")
		if ! [[ $ms =~ ^[0-9]+$ ]] || [ "$ms" -gt "$FEED_WITHIN_MS" ]; then
			fail "the $kind refusal in the feed: want within $FEED_WITHIN_MS ms, got '$ms' $(said)"
		fi
	done
	grep -qx 'feed refused' <<<"$OUT" || fail "COMMAND could write the feed $(said)"
	assert_eq 'deny not-allowed NXDOMAIN' \
		"$(jq -r 'select(.kind == "dns" and .name == "evil.example") | "\(.verdict) \(.reason) \(.answer)"' \
			"$TDIR/denials.jsonl" | head -n 1)" "the feed's DNS line"
	assert_eq '203.0.113.11 80 tcp no-entry' \
		"$(jq -r 'select(.kind == "connect") | "\(.address) \(.port) \(.proto) \(.reason)"' \
			"$TDIR/denials.jsonl")" "the feed's connect line"
	assert_eq '203.0.113.11 9999 udp no-entry' \
		"$(jq -r 'select(.kind == "sendmsg") | "\(.address) \(.port) \(.proto) \(.reason)"' \
			"$TDIR/denials.jsonl")" "the feed's datagram line"
	jq -e 'select(.hint | test("retrying will not help")) | .why' "$TDIR/denials.jsonl" >/dev/null ||
		fail "the feed's lines lack their reason in words and their hint"

	# An upload over its budget: refused on the wire, in the feed as it
	# comes (FEED_WITHIN_MS) after the send failed.
	local log=$TDIR/srv.log
	budget_serve 203.0.113.10 9005 "$log"
	script=$(write_script feed_budget.sh <<'EOF2'
U=$1
now() { date +%s%N; }
"$U" send 203.0.113.10 9005 fb 4194304 >/dev/null 2>&1
t=$(now) i=0
while [ $i -lt 1000 ] && ! grep -q '"reason":"budget"' "$EGRET_DENIALS"; do sleep 0.001; i=$((i + 1)); done
echo "budget $(( ($(now) - t) / 1000000 ))"
cp "$EGRET_DENIALS" "$2/denials-budget.jsonl"
EOF2
)
	attempt --user "$TEST_USER" --allow 203.0.113.10:9005 --upload-limit 1M \
		-- sh "$script" "$(U)" "$TDIR"
	budget_servers_stop
	ms=$(awk '$1 == "budget" { print $2 }' <<<"$OUT")
	if ! [[ $ms =~ ^[0-9]+$ ]] || [ "$ms" -gt "$FEED_WITHIN_MS" ]; then
		fail "the budget refusal in the feed: want within $FEED_WITHIN_MS ms, got '$ms' $(said)"
	fi
	assert_eq '203.0.113.10 9005 budget' \
		"$(jq -r 'select(.reason == "budget") | "\(.address) \(.port) \(.reason)"' \
			"$TDIR/denials-budget.jsonl" | head -n 1)" "the feed's budget line"
}

# A flood of refused names (each its own line: names are not folded into
# repeats) stops at the feed's bound with one last line saying so; egret's
# own count of them loses none.
t_limits_feed_bounded() {
	local script n=5000
	script=$(names_flood_script)
	attempt --user "$TEST_USER" --dns-upstream "$WORLD_DNS" --log "$TDIR/events.json" \
		-- python3 "$script" "$n" flood
	assert_eq 0 "$RC" "egret exit status $(said)"
	local size last
	size=$(sed -n 1p <<<"$OUT") last=$(sed -n 2p <<<"$OUT")
	if [ "${size:-0}" -le $((900 * 1024)) ] || [ "$size" -gt $((1024 * 1024)) ]; then
		fail "the feed after $n refused names: want 900 KiB to 1 MiB, got '$size' bytes $(said)"
	fi
	assert_eq feed-full "$(jq -r .kind <<<"$last")" "the feed's last line"
	grep -qE "the denial feed missed [0-9]+ refusals \(its 1 MiB was full\)" <<<"$ERR" ||
		fail "egret does not say the feed missed refusals $(said)"
	grep -q "DNS 0 answered, $n names denied" <<<"$ERR" ||
		fail "egret's own count of the refused names $(said)"
	assert_eq "$n" "$(grep -c '"kind":"dns".*"verdict":"deny"' "$TDIR/events.json")" \
		"egret's own log of the refused names"
}

# The manifest is no enforcement: where egret cannot write it (a read-only
# /run, as in a container with a read-only root), COMMAND runs without it,
# with one warning, and no variable names files that are not there.
t_limits_unwritable() {
	# shellcheck disable=SC2016 # COMMAND expands them
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" unshare -m sh -c \
		'mkdir -p /run/egret-limits && mount -t tmpfs -o ro tmpfs /run/egret-limits && exec "$@"' \
		sh "$EGRET" run --policy none --user "$TEST_USER" -- \
		sh -c 'echo "${EGRET_LIMITS-unset} ${EGRET_DENIALS-unset}"' >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_eq 0 "$RC" "egret exit status with /run/egret-limits read-only $(said)"
	assert_eq "unset unset" "$OUT" "COMMAND's EGRET_LIMITS and EGRET_DENIALS $(said)"
	grep -q "warning: COMMAND runs without its limits manifest" <<<"$ERR" ||
		fail "no warning about the missing manifest $(said)"
}

# A full tmpfs under the feed (16 KiB, in a mount namespace of the
# test's own): the feed stops where the filesystem does, egret says it
# missed refusals because writes failed, and its own log keeps every one.
t_limits_feed_full() {
	local script n=400 size
	script=$(names_flood_script)
	# shellcheck disable=SC2016 # the inner shell expands them
	timeout -k 5 60 "${WORLD_IN_CLIENT[@]}" unshare -m sh -c \
		'mkdir -p /run/egret-limits && mount -t tmpfs -o size=16k,mode=0711 tmpfs /run/egret-limits && exec "$@"' \
		sh "$EGRET" run --policy none --user "$TEST_USER" --dns-upstream "$WORLD_DNS" \
		--log "$TDIR/events.json" -- python3 "$script" "$n" full >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_eq 0 "$RC" "egret exit status with a full tmpfs under the feed $(said)"
	size=$(sed -n 1p <<<"$OUT")
	if ! [[ $size =~ ^[0-9]+$ ]] || [ "$size" -gt $((16 * 1024)) ] || [ "$size" -lt 4096 ]; then
		fail "the feed on a 16 KiB tmpfs: want 4 KiB to 16 KiB, got '$size' $(said)"
	fi
	grep -qE "the denial feed missed [0-9]+ refusals \(writes failed\)" <<<"$ERR" ||
		fail "egret does not say the feed missed refusals $(said)"
	assert_eq "$n" "$(grep -c '"kind":"dns".*"verdict":"deny"' "$TDIR/events.json")" \
		"egret's own log of the refused names"
}
