# shellcheck shell=bash
# lib.sh - a small test runner and assertions for egret's integration suite.
#
# A test is a shell function. run_test runs it in a subshell, so an assertion
# can end the test with `exit` and nothing it sets leaks into the next one.
# The subshell's status is the verdict: 0 pass, 77 skip, anything else fail.
# Its output is shown only when it fails (or with VERBOSE=1).
#
# Each test gets $TDIR, a fresh world-writable directory: the command under
# test runs as the test user (env.sh) and leaves its evidence files there.

TESTS_PASSED=0
TESTS_FAILED=0
TESTS_SKIPPED=0
TEST_TIMEOUT=${TEST_TIMEOUT:-120}	# seconds per test, a backstop only
# A test that builds egret itself (a second build) needs the time a build
# takes on a loaded machine: TEST_SLOW[name]=SECONDS raises its backstop.
declare -A TEST_SLOW=()
VERBOSE=${VERBOSE:-0}

# The suite's one result line; exit status 1 if anything failed.
summary() {
	local line="$TESTS_PASSED passed, $TESTS_FAILED failed"
	[ "$TESTS_SKIPPED" -gt 0 ] && line="$line, $TESTS_SKIPPED skipped"
	echo "$line"
	[ "$TESTS_FAILED" -eq 0 ]
}

# run_test NAME: run function NAME with a watchdog, record the verdict.
# A hook named test_tidy, if defined, runs after every test (kill strays,
# remove leftovers) so one broken test cannot poison the next.
run_test() {
	local name=$1 out pid sleeper finished rc limit
	limit=$TEST_TIMEOUT
	[ "${TEST_SLOW[$name]:-0}" -gt "$limit" ] && limit=${TEST_SLOW[$name]}
	out=$(mktemp /tmp/egret-test-out.XXXXXX)
	TDIR=$(mktemp -d /tmp/egret-test.XXXXXX)
	chmod 1777 "$TDIR"

	( "$name" ) >"$out" 2>&1 &
	pid=$!
	sleep "$limit" &
	sleeper=$!
	wait -n -p finished "$pid" "$sleeper"
	rc=$?
	if [ "$finished" = "$pid" ]; then
		kill "$sleeper" 2>/dev/null
		wait "$sleeper" 2>/dev/null
	else
		echo "  timed out after ${limit}s" >>"$out"
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rc=124
	fi
	if declare -F test_tidy >/dev/null; then
		test_tidy >>"$out" 2>&1
	fi

	# Our CI must never skip: there a skip counts as a failure.
	if [ "$rc" -eq 77 ] && [ "${CI:-}" = true ]; then
		echo "  (skip counts as failure with CI=true)" >>"$out"
		rc=1
	fi
	case $rc in
	0)	TESTS_PASSED=$((TESTS_PASSED + 1)); echo "ok    $name" ;;
	77)	TESTS_SKIPPED=$((TESTS_SKIPPED + 1)); echo "skip  $name: $(tail -n 1 "$out")" ;;
	*)	TESTS_FAILED=$((TESTS_FAILED + 1)); echo "FAIL  $name" ;;
	esac
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] || [ "$VERBOSE" = 1 ]; then
		sed 's/^/      /' "$out"
	fi
	# KEEP_FAILED=DIR: a failed test's files (egretd.log, outputs) kept
	# in DIR/NAME.XXXXXX for a post-mortem.
	if [ -n "${KEEP_FAILED:-}" ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
		mkdir -p "$KEEP_FAILED" && cp "$out" "$TDIR/test.out" &&
			mv "$TDIR" "$(mktemp -d "$KEEP_FAILED/$name.XXXXXX")/" &&
			echo "      (its files: $KEEP_FAILED/$name.*)"
	fi
	rm -rf "$out" "$TDIR"
}

# --- inside a test -------------------------------------------------------

fail() {
	echo "  FAIL: $*"
	exit 1
}

skip() {
	echo "$*"
	exit 77
}

note() {
	echo "  $*"
}

# A token unique to this call, to send as a payload and look for in a log.
token() {
	echo "$1-$BASHPID-$RANDOM"
}

assert_eq() {	# WANT GOT WHAT
	[ "$1" = "$2" ] || fail "$3: want '$1', got '$2'"
}

assert_contains() {	# NEEDLE HAYSTACK WHAT
	[[ $2 == *"$1"* ]] || fail "$3: want '$1' in '$2'"
}

assert_exists() {	# PATH WHAT
	[ -e "$1" ] || fail "$2: $1 does not exist"
}

assert_absent() {	# PATH WHAT
	[ ! -e "$1" ] || fail "$2: $1 still exists"
}

# True while PID runs (a zombie no longer runs: it only waits to be reaped,
# and orphans here may be reparented to a pid 1 that never reaps).
alive() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# wait_until SECONDS CMD...: poll CMD every 0.1 s; false on timeout.
wait_until() {
	local deadline=$(($1 * 10)) i
	shift
	for ((i = 0; i < deadline; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

wait_for_file() {	# PATH [SECONDS]
	wait_until "${2:-10}" test -e "$1" || fail "timed out waiting for $1"
}

not_alive() {
	! alive "$1"
}

# reap PID [SECONDS]: wait for our background child PID to end and set
# REAPED to its exit status; kill it and fail the test if it outlives the
# deadline. (Not usable in $(...): only this shell can wait for its child.)
reap() {
	local pid=$1
	if ! wait_until "${2:-15}" not_alive "$pid"; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		fail "pid $pid still running after ${2:-15}s"
	fi
	# Braces: bash would report a signal death ("Killed") on stderr.
	{ wait "$pid"; } 2>/dev/null
	# shellcheck disable=SC2034 # read by the tests
	REAPED=$?
}
