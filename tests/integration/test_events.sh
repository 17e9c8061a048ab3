# shellcheck shell=bash
# shellcheck disable=SC2015,SC2016,SC2034
# test_events.sh - what egret tells the operator about an attempt: the
# decision log (--log, --log-allowed), --audit, `egret suggest`, `egret
# status`, the pinned maps as bpftool shows them, the exit summary, and that
# a flood of decisions loses none silently.
#
# Sourced by run.sh after test_dns.sh and test_policy.sh, whose dns_script,
# got, assert_landed, assert_not_landed, assert_reached, assert_conn_refused and
# assert_dns_*_since these tests use. Names are the world's
# (tests/world/world.sh):
#   github.com 203.0.113.10 / 2001:db8:2::10   evil.test 203.0.113.11
#   registry.evil.test 203.0.113.25   198.51.100.7 and 2001:db8:2::11 are
#   reached by address only here (no name resolved in these attempts)
#
# Evidence: the log's JSON lines (each must match schema v1, one object per
# line), compared with what the probe inside the attempt saw (its errno, its
# pid); the world's sink (an allowed or audited flow lands, a denied token
# never does, after a barrier); the world's DNS log (an audited name is
# forwarded, a denied one is not); egret's stderr summary; `egret status`
# and bpftool on the live attempt's pins.
#
# Lookups by name ask for one family (tcp-name ... 4, getent ahostsv4): with
# answers of both families glibc's getaddrinfo connect()s a UDP socket to
# each address, port 0, to sort them - decisions egret logs too, which would
# add lines these tests do not expect.

# --- helpers ----------------------------------------------------------------

# A log's path in a root-only directory (egret writes it as root; COMMAND,
# as the test user, must not touch it). Usage: log=$(log_path NAME)
log_path() {
	[ -d "$TDIR/logs" ] || mkdir -m 0700 "$TDIR/logs"
	echo "$TDIR/logs/$1"
}

# The log lines of FILE containing every SUBSTRING (fixed strings).
# Usage: ev_lines FILE SUBSTRING...
ev_lines() {
	local file=$1
	shift
	awk 'BEGIN { for (i = 1; i < ARGC; i++) want[i] = ARGV[i]; n = ARGC - 1; ARGC = 1 }
	     { for (i = 1; i <= n; i++) if (!index($0, want[i])) next; print }' \
		"$@" <"$file"
}

# How many lines of FILE contain every SUBSTRING.
ev_count() {
	ev_lines "$@" | wc -l
}

# How many decisions those lines stand for: 1 per line, or its "repeats"
# (BPF counted them after the first record; docs/EVENTS.md).
ev_total() {
	ev_lines "$@" | awk '{ n = 1; if (match($0, /"repeats":[0-9]+/)) n = substr($0, RSTART + 10, RLENGTH - 10); t += n } END { print t + 0 }'
}

# The value of KEY in one of egret's compact JSON objects: a string without
# its quotes, a number, null/true/false, or an array as written ([...]).
# The first occurrence of "KEY": wins. Usage: jget JSON KEY
jget() {
	local json=$1 key=$2 v
	v=$(grep -oE "\"$key\":(\"[^\"]*\"|-?[0-9]+|null|true|false|\[[^]]*\])" <<<"$json" |
		head -n 1)
	v=${v#\""$key"\":}
	case $v in \"*\") v=${v#\"}; v=${v%\"} ;; esac
	echo "$v"
}

# Every line of FILE is one schema-v1 object of attempt ID (the fields in
# their order, the kind and verdict from the schema, closed on the line) -
# a decision, or at the end a destination's record; fails the test naming
# the first line that is not.
assert_log_wellformed() {	# FILE ID
	local bad head
	[ -s "$1" ] || fail "log $1 is empty or missing"
	head='^\{"v":1,"time":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z","attempt":"'"$2"'","kind":'
	bad=$(grep -vnE "$head"'"(connect|sendmsg|socket|sockopt|egress|tls|http|dns)","verdict":"(deny|allow|would-deny|servfail)",.*\}$' "$1" |
		grep -vE '^[0-9]+:'"${head#^}"'"destination","name":"[^"]*","sent":[0-9]+,"received":[0-9]+,"connections":[0-9]+,"budget":([0-9]+|null),"over_budget":(true|false)\}$' |
		head -n 3)
	[ -z "$bad" ] || fail "log lines not in schema v1 for attempt $2: $bad"
	[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] ||
		fail "log $1 does not end with a newline: a line was cut"
}

# The event's "time" lies within [T0, T1] (epoch seconds, T1 inclusive of
# the second it was taken in).
assert_time_within() {	# LINE T0 T1 WHAT
	local iso secs
	iso=$(jget "$1" time)
	secs=$(date -u -d "$(sed 's/T/ /; s/\.[0-9]*Z$//; s/Z$//' <<<"$iso")" +%s 2>/dev/null) ||
		fail "$4: time '$iso' is not ISO-8601"
	[ "$secs" -ge "$2" ] && [ "$secs" -le "$(($3 + 1))" ] ||
		fail "$4: time $iso ($secs) is not within the run ($2..$3): $1"
}

# Check FIELD=VALUE pairs of one JSON line. Usage: assert_fields LINE WHAT F=V...
assert_fields() {
	local line=$1 what=$2 kv
	shift 2
	for kv in "$@"; do
		assert_eq "${kv#*=}" "$(jget "$line" "${kv%%=*}")" "$what: field ${kv%%=*} in $line"
	done
}

# The only log line of FILE with all SUBSTRINGs; fails unless exactly one.
one_line() {	# FILE WHAT SUBSTRING...
	local file=$1 what=$2 n
	shift 2
	n=$(ev_count "$file" "$@")
	[ "$n" = 1 ] || fail "$what: want exactly 1 log line with $*, got $n: $(cat "$file")"
	ev_lines "$file" "$@"
}

# Start `egret run ARGS` in the background (client ns, --policy none
# first); EGRET_PID is egret's own pid (nsenter execs it in place), its
# stdout/stderr go to $TDIR/bg.out and $TDIR/bg.err.
start_bg() {
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none "$@" \
		>"$TDIR/bg.out" 2>"$TDIR/bg.err" &
	EGRET_PID=$!
}

# Wait (bounded) for the COMMAND script to report READY in $TDIR; fail with
# what egret said if it never does (or egret ended first).
wait_ready() {	# FILE
	wait_until 20 test -e "$1" ||
		fail "COMMAND never got ready ($1): $(cat "$TDIR/bg.out" "$TDIR/bg.err" 2>/dev/null)"
}

# Let a paused COMMAND end, and reap egret (bounded); RC, OUT, ERR as
# attempt sets them.
finish_bg() {	# GO-FILE
	touch "$1"
	reap "$EGRET_PID" 30
	RC=$REAPED
	OUT=$(cat "$TDIR/bg.out")
	ERR=$(cat "$TDIR/bg.err")
}

# Counter INDEX of attempt ID through bpftool: egret_counters is the
# per-CPU cgroup storage of the attempt's cgroup, keyed by the cgroup's id
# (its inode number, 8 bytes little-endian), a struct egret_counts per CPU.
bpf_counter() {
	local out ino key
	ino=$(stat -c %i "$EGRET_CG_PARENT/$1" 2>&1) || { echo "no-cgroup: $ino"; return; }
	key=$(printf '%016x' "$ino" | sed 's/../& /g' | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')
	# shellcheck disable=SC2086 # the hex bytes are words
	out=$(bpftool -j map lookup pinned "$PIN_ROOT/$1/egret_counters" key hex $key 2>&1) ||
		{ echo "bpftool-failed: $out"; return; }
	jq "[.formatted.values[].value.n[$2]] | add" <<<"$out"
}

# The u32 bpftool prints for an IPv4 address stored in network order.
ip4_as_u32() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	# shellcheck disable=SC2059 # the format is the four bytes, built here
	printf "$(printf '\\%03o' "$a" "$b" "$c" "$d")" | od -An -tu4 | tr -d ' '
}

# The exit summary: the counts line and the top denied destinations.
summary_line() {	# ID  (from $ERR)
	grep -F "egret: attempt $1: connections/datagrams " <<<"$ERR"
}

# --- 1. denials in the log -------------------------------------------------

# A denied connect (to an address learned from an allowed name, on a port
# the rule does not allow), one to an address no name explains, one over
# IPv6, and a denied name: each is one line with the probe's pid and comm,
# the name when DNS taught the address, and the time of the run. The
# allowed connection is not logged - until --log-allowed, which logs it as
# "allow" with the same detail.
t_events_log_denials() {
	local tok script log id=$ID_PREFIX-evl t0 t1 line n0
	tok=$(token evl)
	log=$(log_path deny.log)
	n0=$(world_dns_count evil.test)
	script=$(dns_script cmd.sh <<'EOF'
echo "resolve: $(getent ahostsv4 github.com | awk 'NR == 1 { print $1 }')"
echo "allowed: $("$P" tcp 203.0.113.10 80 "$T-allowed")"
"$P" tcp 203.0.113.10 8080 "$T-port" >"$D/port.out" 2>/dev/null &
echo "pid-port: $!"
wait $!
echo "port: $(cat "$D/port.out")"
"$P" tcp 198.51.100.7 443 "$T-bare" >"$D/bare.out" 2>/dev/null &
echo "pid-bare: $!"
wait $!
echo "bare: $(cat "$D/bare.out")"
echo "v6: $("$P" tcp 2001:db8:2::11 443 "$T-v6")"
echo "dig-evil: $(dstatus evil.test)"
EOF
)
	t0=$(date +%s)
	attempt --id "$id" --log "$log" --user "$TEST_USER" "${DNS[@]}" --allow github.com:80 \
		-- sh "$script" "$P" "$tok" "$TDIR"
	t1=$(date +%s)
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_eq 203.0.113.10 "$(got resolve)" "getent ahostsv4 github.com $(said)"
	assert_reached allowed "$tok-allowed" 203.0.113.10:80 "github.com:80 (allowed)"
	assert_conn_refused port "$tok-port" 203.0.113.10 8080 "github.com's address, port 8080"
	assert_conn_refused bare "$tok-bare" 198.51.100.7 443 "198.51.100.7:443 (no rule)"
	assert_conn_refused v6 "$tok-v6" 2001:db8:2::11 443 "[2001:db8:2::11]:443 (no rule)"
	assert_eq NXDOMAIN "$(got dig-evil)" "dig evil.test $(said)"
	assert_dns_not_asked_since evil.test "$n0" "a denied name"

	assert_log_wellformed "$log" "$id"
	# The port denial: the probe's pid (single-threaded: tid = pid), its
	# uid and comm, and the name whose answer taught the address.
	line=$(one_line "$log" "denied connect to github.com:8080" \
		'"addr":"203.0.113.10"' '"port":8080,')
	assert_fields "$line" "denied connect to github.com:8080" kind=connect \
		verdict=deny reason=port "pid=$(got pid-port)" "tid=$(got pid-port)" \
		"uid=$TEST_UID" comm=probe proto=tcp family=4 name=github.com
	assert_time_within "$line" "$t0" "$t1" "denied connect to github.com:8080"
	# No name taught 198.51.100.7 in this attempt: "name":null.
	line=$(one_line "$log" "denied connect to 198.51.100.7:443" \
		'"addr":"198.51.100.7"' '"port":443,')
	assert_fields "$line" "denied connect to 198.51.100.7:443" kind=connect \
		verdict=deny reason=no-entry "pid=$(got pid-bare)" comm=probe \
		proto=tcp family=4 name=null
	line=$(one_line "$log" "denied connect to [2001:db8:2::11]:443" \
		'"addr":"2001:db8:2::11"')
	assert_fields "$line" "denied connect to [2001:db8:2::11]:443" kind=connect \
		verdict=deny reason=no-entry comm=probe proto=tcp family=6 port=443 name=null
	line=$(one_line "$log" "denied name evil.test" '"kind":"dns"' '"name":"evil.test"')
	assert_fields "$line" "denied name evil.test" verdict=deny reason=not-allowed \
		qtype=1 'addresses=[]'
	assert_time_within "$line" "$t0" "$t1" "denied name evil.test"
	# Those four and nothing else denied; the allowed connect not logged.
	assert_eq 4 "$(ev_count "$log" '"verdict":"deny"')" \
		"denied decisions in the log (3 connects, 1 name): $(cat "$log")"
	assert_eq 0 "$(ev_count "$log" '"addr":"203.0.113.10"' '"port":80,')" \
		"log lines for the allowed github.com:80 without --log-allowed: $(cat "$log")"
	assert_eq 0 "$(ev_count "$log" '"kind":"connect"' '"verdict":"allow"')" \
		"allowed connects logged without --log-allowed: $(cat "$log")"

	# --log-allowed: the same allowed connect is logged, verdict allow.
	tok=$(token evla)
	log=$(log_path allowed.log)
	script=$(dns_script cmd2.sh <<'EOF'
echo "resolve: $(getent ahostsv4 github.com | awk 'NR == 1 { print $1 }')"
"$P" tcp 203.0.113.10 80 "$T-allowed" >"$D/allowed.out" 2>/dev/null &
echo "pid-allowed: $!"
wait $!
echo "allowed: $(cat "$D/allowed.out")"
echo "port: $("$P" tcp 203.0.113.10 8080 "$T-port")"
EOF
)
	attempt --id "$id" --log "$log" --log-allowed --user "$TEST_USER" "${DNS[@]}" \
		--allow github.com:80 -- sh "$script" "$P" "$tok" "$TDIR"
	assert_eq 0 "$RC" "egret --log-allowed exit status $(said)"
	assert_reached allowed "$tok-allowed" 203.0.113.10:80 "github.com:80 (allowed, --log-allowed)"
	assert_conn_refused port "$tok-port" 203.0.113.10 8080 "github.com:8080 (--log-allowed)"
	assert_log_wellformed "$log" "$id"
	line=$(one_line "$log" "--log-allowed: allowed connect to github.com:80" \
		'"kind":"connect"' '"addr":"203.0.113.10"' '"port":80,')
	assert_fields "$line" "--log-allowed: allowed connect to github.com:80" \
		verdict=allow "pid=$(got pid-allowed)" comm=probe "uid=$TEST_UID" proto=tcp \
		family=4 name=github.com
	line=$(one_line "$log" "--log-allowed: denied connect to github.com:8080" \
		'"addr":"203.0.113.10"' '"port":8080,')
	assert_fields "$line" "--log-allowed: denied connect to github.com:8080" \
		verdict=deny reason=port name=github.com
}

# --- 2. --audit -------------------------------------------------------------

# A COMMAND script for the audit runs: with github.com:80 allowed, it
# reaches github.com:8080 by name (port not allowed), asks for evil.test
# (name not allowed) and connects to it by name, connects to a bare address
# and sends a datagram to another. With $4 = pause it then waits for
# $D/go, so the test can look at the live attempt.
audit_script() {
	dns_script audit.sh <<'EOF'
echo "gh8080: $("$P" tcp-name github.com 8080 "$T-gh8080" 4)"
echo "dig-evil: $(dstatus evil.test)"
echo "ans-evil: $(danswer evil.test)"
echo "evil80: $("$P" tcp-name evil.test 80 "$T-evil80" 4)"
echo "bare: $("$P" tcp 198.51.100.7 443 "$T-bare")"
echo "udp: $("$P" udp 203.0.113.24 9999 "$T-udp")"
if [ "$4" = pause ]; then
	touch "$D/ready"
	wait_file "$D/go"
fi
EOF
}

# Every audited step worked and landed where it was aimed.
assert_audit_flows() {	# TOKEN
	assert_reached gh8080 "$1-gh8080" 203.0.113.10:8080 "audit: github.com:8080 (port not allowed)"
	assert_eq NOERROR "$(got dig-evil)" "audit: dig evil.test (name not allowed) $(said)"
	assert_eq 203.0.113.11 "$(got ans-evil)" "audit: dig +short evil.test $(said)"
	assert_reached evil80 "$1-evil80" 203.0.113.11:80 "audit: evil.test:80 (name not allowed)"
	assert_reached bare "$1-bare" 198.51.100.7:443 "audit: 198.51.100.7:443 (no rule)"
	assert_eq ok "$(got udp)" "audit: udp 203.0.113.24:9999 (no rule) $(said)"
	world_sink_wait "$1-udp" || fail "audit: the datagram $1-udp never reached the sink"
	assert_eq 203.0.113.24:9999 "$(world_sink_line "$1-udp" | awk '{ print $2 }')" \
		"audit: where $1-udp arrived"
}

# --audit denies nothing: each destination the policy refuses is reached
# (the sink has the token) and logged as would-deny - with the name when
# the address came from DNS, also for a name the policy does not allow,
# which is forwarded upstream and answered. Such a name's addresses are
# attributed (egret_names) but never enter the allow maps: while the
# attempt runs, neither `egret status` nor the pinned map holds
# 203.0.113.11, and github.com's entry keeps only its allowed port.
t_events_audit() {
	local tok script log id=$ID_PREFIX-eva n0 line st names key
	tok=$(token eva)
	log=$(log_path audit.log)
	n0=$(world_dns_count evil.test)
	script=$(audit_script)
	start_bg --id "$id" --audit --log "$log" --user "$TEST_USER" "${DNS[@]}" \
		--allow github.com:80 -- sh "$script" "$P" "$tok" "$TDIR" pause
	wait_ready "$TDIR/ready"

	st=$("$EGRET" status "$id" --json 2>&1)
	grep -qF '{"addr":"203.0.113.10","ports":[80],' <<<"$st" ||
		fail "audit: github.com's entry should keep port 80 only (8080 was audited, not allowed): $st"
	! grep -qF '"addr":"203.0.113.11"' <<<"$st" ||
		fail "audit: evil.test's address entered the allow map: $st"
	key=$(ip4_as_u32 203.0.113.11)
	! bpftool map dump pinned "$PIN_ROOT/$id/egret_allow4" 2>&1 | tr -d ' \n' |
		grep -qF "\"addr\":$key}" ||
		fail "audit: egret_allow4 holds 203.0.113.11: $(bpftool map dump pinned "$PIN_ROOT/$id/egret_allow4" 2>&1)"
	names=$(bpftool map dump pinned "$PIN_ROOT/$id/egret_names" 2>&1 | tr -d ' \n')
	grep -qF '"name":"evil.test"' <<<"$names" ||
		fail "audit: evil.test's answer not attributed in egret_names: $names"
	finish_bg "$TDIR/go"

	assert_eq 0 "$RC" "egret --audit exit status $(said)"
	assert_audit_flows "$tok"
	assert_dns_asked_since evil.test "$n0" "audit: a name not allowed"

	assert_log_wellformed "$log" "$id"
	assert_eq 0 "$(ev_count "$log" '"verdict":"deny"')" \
		"audit: decisions logged as deny (nothing is denied in audit mode): $(cat "$log")"
	line=$(one_line "$log" "audit: github.com:8080" '"kind":"connect"' \
		'"addr":"203.0.113.10"' '"port":8080,')
	assert_fields "$line" "audit: github.com:8080" verdict=would-deny reason=port \
		comm=probe proto=tcp name=github.com
	line=$(one_line "$log" "audit: evil.test:80" '"kind":"connect"' \
		'"addr":"203.0.113.11"' '"port":80,')
	assert_fields "$line" "audit: evil.test:80" verdict=would-deny reason=no-entry \
		comm=probe name=evil.test
	line=$(one_line "$log" "audit: 198.51.100.7:443" '"kind":"connect"' \
		'"addr":"198.51.100.7"' '"port":443,')
	assert_fields "$line" "audit: 198.51.100.7:443" verdict=would-deny name=null
	line=$(one_line "$log" "audit: udp 203.0.113.24:9999" '"kind":"sendmsg"' \
		'"addr":"203.0.113.24"')
	assert_fields "$line" "audit: udp 203.0.113.24:9999" verdict=would-deny \
		proto=udp port=9999 comm=probe name=null
	# evil.test was asked three times (dig, dig +short, getaddrinfo's A):
	# each answer logged as would-deny, with its address.
	assert_eq 3 "$(ev_count "$log" '"kind":"dns"' '"name":"evil.test"' \
		'"verdict":"would-deny"' '"addresses":["203.0.113.11"]')" \
		"audit: would-deny DNS lines for evil.test with its answer: $(cat "$log")"
	assert_eq 0 "$(ev_count "$log" '"kind":"dns"' '"verdict":"would-deny"' '"name":"github.com"')" \
		"audit: an allowed name logged as would-deny: $(cat "$log")"
	# The summary speaks of what would have been denied: 3 connects and
	# 1 datagram.
	[[ $(summary_line "$id") == "egret: attempt $id: connections/datagrams 0 allowed, 4 would be denied; DNS "* ]] ||
		fail "audit: summary line $(said)"
}

# One datagram to a destination the policy refuses is ONE decision that
# would be denied: a real run denies it once (at sendmsg), so --audit should
# count it once in its summary and its log (which `egret suggest` counts).
# The sendmsg hook lets it through in audit mode, and the egress backstop
# then judges the same packet again.
t_events_audit_udp_once() {
	local tok log id=$ID_PREFIX-evu
	tok=$(token evu)
	log=$(log_path deny.log)
	attempt --id "$id" --log "$log" --user "$TEST_USER" -- "$P" udp 203.0.113.24 9999 "$tok-deny"
	assert_eq 1 "$RC" "deny mode: egret exit status $(said)"
	assert_eq "$REFUSED" "$OUT" "deny mode: udp 203.0.113.24:9999 $(said)"
	grep -qE '^egret:   denied +1 x 203\.0\.113\.24:9999/udp \(no name\): no rule allows this address$' <<<"$ERR" ||
		fail "deny mode: want 'denied 1 x 203.0.113.24:9999/udp' in the summary $(said)"
	assert_eq 1 "$(ev_count "$log" '"addr":"203.0.113.24"')" \
		"deny mode: log lines for one datagram: $(cat "$log")"

	log=$(log_path audit.log)
	attempt --id "$id" --audit --log "$log" --user "$TEST_USER" -- "$P" udp 203.0.113.24 9999 "$tok-audit"
	assert_eq 0 "$RC" "audit: egret exit status $(said)"
	world_sink_wait "$tok-audit" || fail "audit: the datagram never reached the sink $(said)"
	grep -qE '^egret:   would be denied +1 x 203\.0\.113\.24:9999/udp \(no name\): no rule allows this address$' <<<"$ERR" ||
		fail "audit: one datagram should count once ('would be denied 1 x 203.0.113.24:9999/udp'), as the deny-mode run does $(said) log: $(cat "$log")"
	assert_eq 1 "$(ev_count "$log" '"addr":"203.0.113.24"' '"verdict":"would-deny"')" \
		"audit: would-deny log lines for one datagram: $(cat "$log")"
}

# --- 3. egret suggest -------------------------------------------------------

# The audit log, turned into a policy by `egret suggest --repo`, allows
# exactly what the audited attempt was refused: applied with --policy (and
# no --allow), each audited destination works, and a port, a name or an
# address the log does not show stays denied - including github.com:80,
# which the audited run had from --allow and never logged.
t_events_suggest() {
	local tok script log id=$ID_PREFIX-evs pol out rc n0
	tok=$(token evs)
	log=$(log_path audit.log)
	script=$(audit_script)
	attempt --id "$id" --audit --log "$log" --user "$TEST_USER" "${DNS[@]}" \
		--allow github.com:80 -- sh "$script" "$P" "$tok" "$TDIR"
	assert_eq 0 "$RC" "egret --audit exit status $(said)"
	assert_audit_flows "$tok"

	pol=$(policy_path suggested.yaml)
	"$EGRET" suggest "$log" --repo acme/webapp >"$pol" 2>"$TDIR/suggest.err"
	rc=$?
	assert_eq 0 "$rc" "egret suggest exit status: $(cat "$TDIR/suggest.err")"
	chmod 0644 "$pol"
	out=$(cat "$pol")
	note "suggested: $out"
	grep -qE '^  acme/webapp:$' <<<"$out" || fail "suggest --repo: no acme/webapp section: $out"
	grep -qE '^      - "github\.com:8080"' <<<"$out" || fail "suggest: want host github.com:8080: $out"
	grep -qE '^      - "evil\.test:80"' <<<"$out" || fail "suggest: want host evil.test:80: $out"
	grep -qE '^      - "198\.51\.100\.7:443" .*no name' <<<"$out" ||
		fail "suggest: want cidr 198.51.100.7:443 with a no-name comment: $out"
	grep -qE '^      - "203\.0\.113\.24:9999"' <<<"$out" || fail "suggest: want cidr 203.0.113.24:9999: $out"
	assert_eq 4 "$(grep -cE '^      - "' <<<"$out")" "suggest: entries (exactly the 4 audited destinations): $out"
	"$EGRET" check --policy "$pol" --repo acme/webapp >"$TDIR/check.out" 2>&1 ||
		fail "egret check refuses the suggested policy: $(cat "$TDIR/check.out")"

	n0=$(world_dns_count registry.evil.test)
	tok=$(token evs2)
	script=$(dns_script enforce.sh <<'EOF'
echo "gh8080: $("$P" tcp-name github.com 8080 "$T-gh8080" 4)"
echo "evil80: $("$P" tcp-name evil.test 80 "$T-evil80" 4)"
echo "bare: $("$P" tcp 198.51.100.7 443 "$T-bare")"
echo "udp: $("$P" udp 203.0.113.24 9999 "$T-udp")"
echo "gh80: $("$P" tcp 203.0.113.10 80 "$T-gh80")"
echo "evil443: $("$P" tcp 203.0.113.11 443 "$T-evil443")"
echo "bare80: $("$P" tcp 198.51.100.7 80 "$T-bare80")"
echo "udp5353: $("$P" udp 203.0.113.24 5353 "$T-udp5353")"
echo "dig-other: $(dstatus registry.evil.test)"
echo "other: $("$P" tcp 203.0.113.25 443 "$T-other")"
EOF
)
	attempt --policy "$pol" --repo acme/webapp --user "$TEST_USER" "${DNS[@]}" \
		-- sh "$script" "$P" "$tok" "$TDIR"
	assert_eq 0 "$RC" "egret --policy (suggested) exit status $(said)"
	assert_reached gh8080 "$tok-gh8080" 203.0.113.10:8080 "suggested policy: github.com:8080"
	assert_reached evil80 "$tok-evil80" 203.0.113.11:80 "suggested policy: evil.test:80"
	assert_reached bare "$tok-bare" 198.51.100.7:443 "suggested policy: 198.51.100.7:443"
	assert_eq ok "$(got udp)" "suggested policy: udp 203.0.113.24:9999 $(said)"
	world_sink_wait "$tok-udp" || fail "suggested policy: datagram $tok-udp never arrived"
	assert_conn_refused gh80 "$tok-gh80" 203.0.113.10 80 "suggested policy: github.com:80 (not in the log)"
	assert_conn_refused evil443 "$tok-evil443" 203.0.113.11 443 "suggested policy: evil.test:443 (port not in the log)"
	assert_conn_refused bare80 "$tok-bare80" 198.51.100.7 80 "suggested policy: 198.51.100.7:80 (port not in the log)"
	assert_eq "$REFUSED" "$(got udp5353)" "suggested policy: udp 203.0.113.24:5353 $(said)"
	assert_not_landed "$tok-udp5353" udp 203.0.113.24 5353 "suggested policy: udp 203.0.113.24:5353"
	assert_eq NXDOMAIN "$(got dig-other)" "suggested policy: registry.evil.test (not in the log) $(said)"
	assert_dns_not_asked_since registry.evil.test "$n0" "suggested policy: registry.evil.test"
	assert_conn_refused other "$tok-other" 203.0.113.25 443 "suggested policy: 203.0.113.25:443 (not in the log)"
}

# Address-selection probes: getaddrinfo (port 0) and Go's resolver (port
# 9) connect() UDP sockets to sort addresses and never send. That is no
# egress: no denial in the summary, the log, the requests or egret suggest.
# A datagram a connected socket does send to a denied address is judged on
# its way (the backstop, reason no-entry) and shows up everywhere.
t_events_udp_probes() {
	local tok script log id=$ID_PREFIX-evp st out
	tok=$(token evp)
	log=$(log_path probes.log)
	st="$TDIR/state"
	script=$(dns_script cmd.sh <<'EOF'
echo "getent: $(getent ahosts github.com | awk '$2 == "STREAM" { print $1 }' | sort | tr '\n' ' ')"
echo "go9: $("$P" udp-probe 198.51.100.7 9)"
echo "gai0: $("$P" udp-probe 2001:db8:2::11 0)"
echo "sent: $("$P" udp-connected 198.51.100.7 9999 "$T-sent")"
EOF
)
	attempt --id "$id" --log "$log" --repo acme/probes --state-dir "$st" --user "$TEST_USER" \
		"${DNS[@]}" --allow github.com:80 -- sh "$script" "$P" "$tok" "$TDIR"
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_eq "2001:db8:2::10 203.0.113.10 " "$(got getent)" "getent ahosts github.com $(said)"
	assert_eq ok "$(got go9)" "a UDP connect to 198.51.100.7:9, nothing sent $(said)"
	assert_eq ok "$(got gai0)" "a UDP connect to [2001:db8:2::11]:0, nothing sent $(said)"
	assert_eq "$DROPPED" "$(got sent)" "a datagram to 198.51.100.7:9999 $(said)"
	assert_not_landed "$tok-sent" udp 198.51.100.7 9999 "the connected socket's datagram"
	! grep -qE ':(0|9)/udp' <<<"$ERR" || fail "a probe in the summary: $ERR"
	grep -q "198.51.100.7:9999/udp" <<<"$ERR" || fail "the datagram sent is not in the summary: $ERR"
	! grep -qE '"port":(0|9),' "$log" || fail "a probe in the log: $(grep -E '"port":(0|9),' "$log")"
	grep -q '"kind":"egress","verdict":"deny","reason":"no-entry".*"addr":"198.51.100.7","port":9999' "$log" ||
		fail "the datagram sent is not in the log: $(cat "$log")"
	out=$("$EGRET" requests list --repo acme/probes --state-dir "$st" --json 2>&1)
	grep -q '"target":"198.51.100.7","port":9999' <<<"$out" ||
		fail "the datagram sent is no request: $out"
	! grep -qE '"port":(0|9),' <<<"$out" || fail "a probe became a request: $out"
	out=$("$EGRET" suggest "$log" 2>&1)
	! grep -qE ':(0|9)\b' <<<"$out" || fail "a probe in egret suggest: $out"
	grep -q '198.51.100.7:9999' <<<"$out" || fail "egret suggest misses the datagram sent: $out"
}

# --- 4. egret status --------------------------------------------------------

# While an attempt runs: `egret status --json` lists it (id, live, egret's
# pid, cgroup, repo from --repo, its processes, counters per hook) with the
# entry learned from DNS (address, port, name, time left); `egret status
# ID` and the text form say the same. After it ends the attempt is gone.
t_events_status() {
	local tok script id=$ID_PREFIX-evst st obj entry n ttl txt all
	tok=$(token evst)
	script=$(dns_script cmd.sh <<'EOF'
echo "resolve: $(getent ahostsv4 github.com | awk 'NR == 1 { print $1 }')"
echo "allowed: $("$P" tcp 203.0.113.10 80 "$T-allowed")"
echo "port: $("$P" tcp 203.0.113.10 8080 "$T-port")"
touch "$D/ready"
wait_file "$D/go"
EOF
)
	start_bg --id "$id" --repo acme/webapp --user "$TEST_USER" "${DNS[@]}" \
		--allow github.com:80 -- sh "$script" "$P" "$tok" "$TDIR"
	wait_ready "$TDIR/ready"

	st=$("$EGRET" status "$id" --json 2>&1) || fail "egret status $id --json failed: $st"
	[[ $st == '{"version":1,"attempts":[{"id":"'"$id"'",'*']}' ]] ||
		fail "egret status $id --json: want one attempt $id: $st"
	obj=${st#*\"attempts\":[}
	assert_fields "$obj" "status --json" live=true "egret_pid=$EGRET_PID" \
		"cgroup=$(cg_of "$id")" repo=acme/webapp
	n=$(jget "$obj" pids)
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || fail "status --json: pids '$n', want >= 1: $st"
	[ "$(jget "$obj" started)" -ge "$(($(date +%s) - 120))" ] 2>/dev/null ||
		fail "status --json: started '$(jget "$obj" started)' is not a recent epoch time: $st"
	assert_fields "$(grep -oE '"connect":\{[^}]*\}' <<<"$obj")" "status --json: connect counters" \
		allow=1 deny=1 would_deny=0
	assert_fields "$obj" "status --json" dropped_events=0
	entry=$(grep -oE '\{"addr":"203\.0\.113\.10"[^}]*\}' <<<"$obj")
	[ -n "$entry" ] || fail "status --json: no entry for 203.0.113.10 (learned from github.com): $st"
	assert_fields "$entry" "status --json: github.com's entry" 'ports=[80]' name=github.com
	ttl=$(jget "$entry" expires_in)
	[[ $ttl =~ ^[0-9]+$ ]] && [ "$ttl" -gt 0 ] && [ "$ttl" -le 600 ] ||
		fail "status --json: expires_in '$ttl', want 1..600 (TTL 600): $entry"

	# Bytes per destination, live: the allowed probe's request was sent.
	n=$(jq -r '.attempts[0].destinations[] | select(.name == "github.com") |
		"\(.connections) \(.sent > 0) \(.budget)"' <<<"$st")
	assert_eq "1 true null" "$n" "status --json: github.com's destination (connections, sent > 0, budget): $st"

	all=$("$EGRET" status --json 2>&1) || fail "egret status --json failed: $all"
	grep -qF '{"id":"'"$id"'","live":true,' <<<"$all" || fail "egret status --json lacks $id: $all"

	txt=$("$EGRET" status "$id" 2>&1) || fail "egret status $id failed: $txt"
	note "status: $txt"
	grep -qE "^$id +live +pids [1-9][0-9]* .*repo acme/webapp$" <<<"$txt" ||
		fail "egret status $id: want '$id live pids N ... repo acme/webapp': $txt"
	grep -qE '^ +203\.0\.113\.10 +80 +[1-9][0-9]* s +github\.com$' <<<"$txt" ||
		fail "egret status $id: want the entry '203.0.113.10 80 N s github.com': $txt"
	grep -qE 'connect 1/1;' <<<"$txt" || fail "egret status $id: want 'connect 1/1' (allowed/denied): $txt"

	finish_bg "$TDIR/go"
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_reached allowed "$tok-allowed" 203.0.113.10:80 "github.com:80"
	assert_eq "$REFUSED" "$(got port)" "github.com:8080 $(said)"
	st=$("$EGRET" status --json 2>&1)
	! grep -qF "\"id\":\"$id\"" <<<"$st" || fail "egret status --json still lists $id after it ended: $st"
	txt=$("$EGRET" status "$id" 2>&1)
	n=$?
	assert_eq 1 "$n" "egret status $id after the run: exit status ($txt)"
	assert_eq "no attempt $id" "$txt" "egret status $id after the run"
}

# --- 5. the pinned maps through bpftool --------------------------------------

# The maps carry BTF, so bpftool shows named fields: the learned entry's
# rules (expires_ns, port_lo/port_hi) under github.com's address, the name
# that taught it in egret_names, and the per-CPU counters at their
# documented indexes (connect deny = 0, connect allow = 1, dropped = 24).
t_events_bpftool() {
	local tok script id=$ID_PREFIX-evb out key cg line other
	command -v bpftool >/dev/null || fail "bpftool missing (package bpftool)"
	tok=$(token evb)
	script=$(dns_script cmd.sh <<'EOF'
echo "resolve: $(getent ahostsv4 github.com | awk 'NR == 1 { print $1 }')"
echo "allowed: $("$P" tcp 203.0.113.10 80 "$T-allowed")"
echo "port: $("$P" tcp 203.0.113.10 8080 "$T-port")"
echo "port2: $("$P" tcp 203.0.113.10 8080 "$T-port2")"
touch "$D/ready"
wait_file "$D/go"
EOF
)
	start_bg --id "$id" --user "$TEST_USER" "${DNS[@]}" --allow github.com:80 \
		-- sh "$script" "$P" "$tok" "$TDIR"
	wait_ready "$TDIR/ready"

	key=$(ip4_as_u32 203.0.113.10)
	# The maps are every attempt's: keys begin with the attempt's, its
	# cgroup's id.
	cg=$(stat -c %i "$EGRET_CG_PARENT/$id") || fail "no cgroup for $id"
	out=$(bpftool map dump pinned "$PIN_ROOT/$id/egret_allow4" 2>&1) ||
		fail "bpftool map dump egret_allow4: $out"
	note "egret_allow4: $(tr -d ' \n' <<<"$out" | head -c 300)"
	out=$(tr -d ' \n' <<<"$out")
	[[ $out == *'{"key":{"attempt":'"$cg"',"addr":'"$key"',"zero":0},"value":{"rules":[{"expires_ns":'[1-9]*',"port_lo":80,"port_hi":80,'* ]] ||
		fail "bpftool egret_allow4: want attempt $cg, github.com's address ($key) with a rule expires_ns/port_lo 80/port_hi 80: $out"
	[[ $out == *'"flags":'* ]] || fail "bpftool egret_allow4: no named field flags: $out"

	# The key `egret status` prints is the maps' .key.attempt, and the
	# one-liner it prints (README) keeps this attempt's entries only.
	assert_eq "$cg" "$("$EGRET" status "$id" --json | jq '.attempts[0].key')" \
		"egret status --json: the attempt's key"
	# Another attempt's entries are in the same map meanwhile: it runs
	# until the test lets it end (other.go; bounded).
	"${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none --id "$id-other" \
		--user "$(own_uid 950)" --allow 203.0.113.12:443 -- sh -c \
		'i=0; while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done' \
		sh "$TDIR/other.go" >/dev/null 2>&1 &
	other=$!
	wait_until 20 test -e "$PIN_ROOT/$id-other/egret_allow4" || fail "the other attempt did not start"
	wait_until 20 sh -c 'bpftool map dump pinned "$1" | jq -e "map(select(.key.attempt != $2)) | length > 0" >/dev/null' \
		sh "$PIN_ROOT/$id/egret_allow4" "$cg" || fail "the other attempt's entry never showed in the map"
	line=$("$EGRET" status "$id" | sed -n "s/^  key $cg (the maps' .key.attempt: \(.*\))$/\1/p")
	[ -n "$line" ] || fail "egret status: no 'key $cg (...)' line: $("$EGRET" status "$id")"
	out=$(sh -c "$line" | jq -sc 'map(.key.attempt) | unique') ||
		fail "the printed one-liner failed: $line"
	assert_eq "[$cg]" "$out" "the one-liner's entries: this attempt's only"
	touch "$TDIR/other.go"
	reap "$other" 30
	out=$(bpftool map dump pinned "$PIN_ROOT/$id/egret_names" 2>&1) ||
		fail "bpftool map dump egret_names: $out"
	note "egret_names: $(tr -d ' \n' <<<"$out")"
	out=$(tr -d ' \n' <<<"$out")
	# A char array: bpftool prints it as a string; older ones as an array
	# of characters.
	[[ $out == *'{"key":{"attempt":'"$cg"',"family":4,"addr":['"$key"',0,0,0],"zero":0},"value":{"name":"github.com"}}'* ]] ||
		[[ $out == *'"attempt":'"$cg"',"family":4,"addr":['"$key"',0,0,0],"zero":0},"value":{"name":["g","i","t","h","u","b",".","c","o","m"'* ]] ||
		fail "bpftool egret_names: want attempt $cg, family 4, addr $key -> name github.com: $out"

	assert_eq 2 "$(bpf_counter "$id" 0)" "bpftool egret_counters[0] (connect deny)"
	assert_eq 1 "$(bpf_counter "$id" 1)" "bpftool egret_counters[1] (connect allow)"
	assert_eq 0 "$(bpf_counter "$id" 2)" "bpftool egret_counters[2] (connect would-deny)"
	assert_eq 0 "$(bpf_counter "$id" 24)" "bpftool egret_counters[24] (events dropped)"

	finish_bg "$TDIR/go"
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_reached allowed "$tok-allowed" 203.0.113.10:80 "github.com:80"
	assert_eq "$REFUSED" "$(got port)" "github.com:8080 $(said)"
}

# --- 6. a flood of denials ----------------------------------------------------

FLOOD_N=100000		# connect() calls; about a second on a 2-CPU VM

# FLOOD_N denied connect() calls from one loop, as fast as it can: each
# is refused, the counters count every one, and none is lost: the first
# is a log line of its own, the rest come counted ("repeats") in a few
# lines, and the exit summary and the live counters (egret status,
# bpftool) agree. Twice: with COMMAND pausing after the flood (to read
# the live counters), and with the flood as COMMAND itself (what BPF
# holds at exit must still be logged).
t_events_flood() {
	local script log id=$ID_PREFIX-evf st obj dropped lines total t0 t1
	local what=('"kind":"connect","verdict":"deny"' '"addr":"203.0.113.11","port":443,')
	log=$(log_path flood.log)
	script=$(dns_script flood.sh <<'EOF'
"$P" flood 203.0.113.11 443 "$4" >"$D/flood.out" 2>"$D/flood.err"
touch "$D/ready"
wait_file "$D/go"
EOF
)
	t0=$(date +%s)
	start_bg --id "$id" --log "$log" --user "$TEST_USER" -- sh "$script" "$P" x "$TDIR" "$FLOOD_N"
	wait_ready "$TDIR/ready"
	assert_eq "refused $FLOOD_N" "$(cat "$TDIR/flood.out")" \
		"probe flood: connect() calls egret refused ($(cat "$TDIR/flood.err"))"

	st=$("$EGRET" status "$id" --json 2>&1) || fail "egret status $id --json: $st"
	obj=${st#*\"attempts\":[}
	assert_fields "$(grep -oE '"connect":\{[^}]*\}' <<<"$obj")" "status --json during the flood" \
		allow=0 "deny=$FLOOD_N" would_deny=0
	dropped=$(jget "$obj" dropped_events)
	assert_eq 0 "$dropped" "status --json: dropped_events during the flood: $st"
	assert_eq "$FLOOD_N" "$(bpf_counter "$id" 0)" "bpftool egret_counters[0] (connect deny)"
	assert_eq 0 "$(bpf_counter "$id" 24)" "bpftool egret_counters[24] (events dropped)"
	finish_bg "$TDIR/go"
	t1=$(date +%s)
	assert_eq 0 "$RC" "egret exit status $(said)"

	assert_log_wellformed "$log" "$id"
	lines=$(ev_count "$log" "${what[@]}")
	total=$(ev_total "$log" "${what[@]}")
	note "flood: N=$FLOOD_N connect() calls in $lines log lines, $((t1 - t0)) s"
	assert_eq "$(wc -l <"$log")" "$lines" "log lines that are not the flood's denials"
	assert_eq "$FLOOD_N" "$total" "flood: decisions the log accounts for, want every one"
	# One record, then at most a line of repeats a second (and one at exit).
	[ "$lines" -le $((t1 - t0 + 3)) ] || fail "flood: $lines log lines in $((t1 - t0)) s: repeats not folded"
	[ "$(ev_count "$log" "${what[@]}" '"pid":')" -ge 1 ] || fail "flood: no record names the process"
	[[ $(summary_line "$id") == "egret: attempt $id: connections/datagrams 0 allowed, $FLOOD_N denied; "* ]] ||
		fail "flood: summary counts line $(said)"
	! grep -qF 'events lost' <<<"$ERR" || fail "flood: the summary says events lost $(said)"
	grep -qE "^egret:   denied +$FLOOD_N x 203\\.0\\.113\\.11:443/tcp \\(no name\\): no rule allows this address\$" <<<"$ERR" ||
		fail "flood: summary's top destination, want $FLOOD_N x 203.0.113.11:443/tcp $(said)"

	# The flood as COMMAND's last act: egret must read what BPF still
	# holds (records and counts) when COMMAND exits.
	log=$(log_path flood-last.log)
	attempt --id "$id" --log "$log" --user "$TEST_USER" -- "$P" flood 203.0.113.11 443 "$FLOOD_N"
	t1=$(date +%s)
	assert_eq 0 "$RC" "flood as COMMAND: exit status $(said)"
	assert_eq "refused $FLOOD_N" "$OUT" "flood as COMMAND: connect() calls egret refused $(said)"
	assert_log_wellformed "$log" "$id"
	note "flood as COMMAND: $(ev_count "$log" "${what[@]}") log lines"
	assert_eq "$(wc -l <"$log")" "$(ev_count "$log" "${what[@]}")" "flood as COMMAND: log lines that are not the flood's denials"
	assert_eq "$FLOOD_N" "$(ev_total "$log" "${what[@]}")" \
		"flood as COMMAND: decisions the log accounts for, want every one $(said)"
	! grep -qF 'events lost' <<<"$ERR" || fail "flood as COMMAND: the summary says events lost $(said)"
	[ $((t1 - t0)) -lt 60 ] || fail "the floods took $((t1 - t0)) s (bound 60 s)"
}

# --- 7. the exit summary ------------------------------------------------------

# The summary names the attempt's counts and, first, the most denied
# destination with its count and the name that taught its address; an
# address no name explains says "(no name)". -q prints none of it.
t_events_summary() {
	local tok script id=$ID_PREFIX-evsu top
	tok=$(token evsu)
	script=$(dns_script cmd.sh <<'EOF'
echo "resolve: $(getent ahostsv4 github.com | awk 'NR == 1 { print $1 }')"
echo "allowed: $("$P" tcp 203.0.113.10 80 "$T-allowed")"
for i in 1 2 3; do echo "port$i: $("$P" tcp 203.0.113.10 8080 "$T-port$i")"; done
echo "bare: $("$P" tcp 198.51.100.7 443 "$T-bare")"
echo "dig-evil: $(dstatus evil.test)"
EOF
)
	attempt --id "$id" --user "$TEST_USER" "${DNS[@]}" --allow github.com:80 \
		-- sh "$script" "$P" "$tok" "$TDIR"
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_reached allowed "$tok-allowed" 203.0.113.10:80 "github.com:80"
	assert_eq "$REFUSED" "$(got port3)" "github.com:8080 $(said)"
	assert_eq "$REFUSED" "$(got bare)" "198.51.100.7:443 $(said)"
	assert_eq NXDOMAIN "$(got dig-evil)" "dig evil.test $(said)"
	assert_eq "egret: attempt $id: connections/datagrams 1 allowed, 4 denied; DNS 1 answered, 1 names denied, 0 failed" \
		"$(summary_line "$id")" "summary counts line $(said)"
	top=$(grep -E '^egret:   denied ' <<<"$ERR" | head -n 1)
	[[ $top =~ ^egret:\ \ \ denied\ +3\ x\ github\.com\ \(203\.0\.113\.10:8080/tcp\):\ port\ not\ allowed$ ]] ||
		fail "summary: top denied destination, want '3 x github.com (203.0.113.10:8080/tcp)', got '$top' $(said)"
	grep -qE '^egret:   denied +1 x 198\.51\.100\.7:443/tcp \(no name\): no rule allows this address$' <<<"$ERR" ||
		fail "summary: want '1 x 198.51.100.7:443/tcp (no name): no rule allows this address' $(said)"
	# The denied name, with why: what the user needs to widen the policy.
	grep -qE '^egret:   name denied +1 x evil\.test: not allowed by the policy$' <<<"$ERR" ||
		fail "summary: want 'name denied 1 x evil.test: not allowed by the policy' $(said)"
	assert_eq 2 "$(grep -cE '^egret:   denied ' <<<"$ERR")" "summary: denied destinations listed $(said)"

	attempt -q --id "$id" --user "$TEST_USER" "${DNS[@]}" --allow github.com:80 \
		-- sh "$script" "$P" "$(token evsq)" "$TDIR"
	assert_eq 0 "$RC" "egret -q exit status $(said)"
	! grep -qE '^egret: ' <<<"$ERR" || fail "-q: egret still printed $(said)"
}
