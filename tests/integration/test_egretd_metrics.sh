# shellcheck shell=bash
# shellcheck disable=SC2015 # `A && B || fail` is meant (fail exits)
# test_egretd_metrics.sh - egretd's metrics (docs/EGRETD.md, "Metrics"):
# what an attempt through egretd did is counted exactly, on the unix
# socket and on the loopback TCP address, in an exposition promtool
# passes. Sourced by run.sh, after test_egretd.sh (egretd_start, via).

# metric NAME{LABELS} TEXT: the sample's value in the exposition TEXT ("" if
# absent).
metric() {
	awk -v s="$1" '$1 == s { print $2; exit }' <<<"$2"
}

# scrape_tcp PORT / scrape_unix SOCK: the exposition, as Prometheus and
# an operator's curl get it (egretd's loopback is the client namespace's).
scrape_tcp() {
	"${WORLD_IN_CLIENT[@]}" curl -sf --max-time 5 "http://127.0.0.1:$1/metrics"
}
scrape_unix() {
	curl -sf --max-time 5 --unix-socket "$1" http://egretd/metrics
}

# One attempt with a known number of refusals: 3 denied connects (tcp,
# no-entry), 2 names refused (one question each, NXDOMAIN by egret) and
# one allowed flow; COMMAND exits 3. Counted once it ended, on both
# endpoints alike, and promtool passes the text.
t_egretd_metrics() {
	local port=$((20000 + RANDOM % 20000)) msock text ok running nofile
	msock="/run/egretd-test-$$/metrics.sock"
	# egretd started with the usual soft fd limit (systemd's default).
	nofile=$(ulimit -Sn)
	ulimit -Sn 1024
	egretd_start "  - user: $TEST_USER
    repos: [octo/app]
    allow: true" "metrics:
  socket: $msock
  listen: 127.0.0.1:$port
  repositories: 4"
	ulimit -Sn "$nofile"
	text=$(scrape_tcp "$port") || fail "no exposition on 127.0.0.1:$port: $(tail -3 "$TDIR/egretd.log")"
	assert_eq 0 "$(metric egret_attempts_started_total "$text")" "attempts started before any"
	assert_eq "srw-------" "$(stat -c %A "$msock")" "the metrics socket's mode (root's alone)"
	ok=$(token ok)
	# While one runs: the gauge says so.
	via_bg running --allow 203.0.113.10:80 -- sh -c 'sleep 3'
	wait_until 10 sh -c "curl -sf --unix-socket '$msock' http://egretd/metrics | grep -qx 'egret_attempts_running 1'" ||
		fail "egret_attempts_running never read 1 while an attempt ran"
	wait "$CPID"
	via --repo octo/app --allow 203.0.113.10:80 -- sh -c "
		for i in 1 2 3; do \"\$1\" tcp 203.0.113.11 80 deny\$i; done
		dig +tries=1 +time=2 @$WORLD_DNS4 denied-one.test A >/dev/null
		dig +tries=1 +time=2 @$WORLD_DNS4 denied-two.test A >/dev/null
		\"\$1\" tcp 203.0.113.10 80 $ok >/dev/null; exit 3" sh "$P"
	assert_eq 3 "$RC" "the counted attempt's status $(said)"
	world_sink_wait "$ok" "$WORLD_LOG" || fail "the allowed flow never reached the world"
	text=$(scrape_tcp "$port") || fail "no exposition after the attempt"
	assert_eq 2 "$(metric egret_attempts_started_total "$text")" "attempts started"
	assert_eq 0 "$(metric egret_attempts_running "$text")" "attempts running after both ended"
	assert_eq 1 "$(metric 'egret_attempts_ended_total{class="ok"}' "$text")" "attempts ended ok"
	assert_eq 1 "$(metric 'egret_attempts_ended_total{class="command_failed"}' "$text")" \
		"attempts ended with COMMAND's failure"
	assert_eq 2 "$(metric egret_attempt_setup_seconds_count "$text")" "set-up times observed"
	assert_eq 3 "$(metric 'egret_refusals_total{reason="no-entry",protocol="tcp"}' "$text")" \
		"connects refused (no-entry, tcp)"
	assert_eq 2 "$(metric 'egret_refusals_total{reason="not-allowed",protocol="dns"}' "$text")" \
		"names refused (not-allowed, dns)"
	assert_eq 2 "$(metric 'egret_dns_questions_total{result="denied"}' "$text")" "DNS denied"
	running=$(metric 'egret_repository_sent_bytes_total{repository="octo/app"}' "$text")
	[ -n "$running" ] && [ "$running" -gt 0 ] ||
		fail "bytes sent by octo/app's attempt: want > 0, got '$running'"
	assert_eq "$text" "$(scrape_unix "$msock")" "the unix socket's exposition, the same"
	promtool check metrics <<<"$text" >"$TDIR/promtool.out" 2>&1 ||
		fail "promtool check metrics: $(cat "$TDIR/promtool.out")"
	assert_eq "" "$(cat "$TDIR/promtool.out")" "promtool's complaints"
	# The loop holds a channel to each attempt's process and raises its
	# own fd limit for them; COMMAND gets egretd's as it was.
	[ "$(awk '/^Max open files/ { print $4 }' "/proc/$EGRETD_PID/limits")" -ge 1618 ] ||
		fail "egretd's loop did not raise its fd limit: $(grep 'open files' "/proc/$EGRETD_PID/limits")"
	via -- sh -c 'ulimit -n'
	assert_eq 1024 "$OUT" "COMMAND's fd limit through egretd: egretd's as it started $(said)"
	# Only GET and HEAD of /metrics.
	assert_contains "404" "$("${WORLD_IN_CLIENT[@]}" curl -s -o /dev/null -w '%{http_code}' \
		"http://127.0.0.1:$port/other")" "another path"
	assert_contains "405" "$("${WORLD_IN_CLIENT[@]}" curl -s -o /dev/null -w '%{http_code}' \
		-X POST "http://127.0.0.1:$port/metrics")" "a POST"
	egretd_stop
}
