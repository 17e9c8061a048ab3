#!/usr/bin/env bash
# run.sh - egret's real-client suite: the tools an agent really runs, each
# through `egret run` as the test user with a HOME of its own, against real
# servers in the sealed test world.
#
#   EGRET=/abs/build/egret HELPERS=/abs/build/helpers CLIENTS_BUILD=/abs/dir \
#       tests/clients/run.sh [REGEX]
#   ... tests/clients/run.sh --time-to-failure     (make bench-clients)
#
# The world (tests/world/world.sh) gets three more names:
#   pkgs.test    203.0.113.30, 2001:db8:2::30   HTTP: files, a PEP 503 index
#                                               with a wheel, an npm tarball,
#                                               a flat apt repository
#   git.test     203.0.113.31, 2001:db8:2::31   git smart HTTP (http-backend)
#                                               and git daemon (9418)
#   mirror.test  203.0.113.32                   the same servers, never allowed
# Each serves the same over HTTPS on 443 too, with one certificate for
# pkgs.test and git.test signed by a throwaway CA ($CA, made at suite start
# and deleted with the fixtures; every client is given it the way it takes
# one, never through the system's trust store). fixtures.py builds what they
# serve, the CA and the certificate; server.py serves HTTP and HTTPS and
# logs every connection it accepts and, over TLS, the SNI of its
# ClientHello (what egret will pin a connection to).
#
# Every client is run allowed (it works: the artefact's own marker comes
# back; over HTTPS, allowed on 443 only, and the server saw the URL's name
# as SNI) and denied twice (each client over HTTP, curl over HTTPS too): by
# name (mirror.test: egret answers NXDOMAIN and the world's resolver is
# never asked) and by address (203.0.113.32: the connect is refused). A
# denial counts only if the client failed AND no connection from the client
# namespace reached the server, checked after a barrier connection from
# outside egret. The assertions are outcomes, never timings: `make
# bench-clients` measures how long each client takes to fail
# (docs/CLIENTS.md).
#
# Needs what the integration suite needs plus wget, git, python3 with pip,
# node and npm, go, host, apt-get, dpkg-deb, dpkg-scanpackages and openssl
# (tools/install-deps.sh installs them). Without them it skips (exit 0),
# except with CI=true, where that is a failure.
# SC2015: `A && B || fail` is intended (fail exits). SC2016: single-quoted
# $1 belongs to a child shell. SC2034: variables read by sourced files.
# shellcheck disable=SC2015,SC2016,SC2034
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$HERE/../integration/lib.sh"
# shellcheck source=tests/world/world.sh
. "$HERE/../world/world.sh"
# shellcheck source=tests/integration/env.sh
. "$HERE/../integration/env.sh"

EGRET=${EGRET:-}
HELPERS=${HELPERS:-}
CLIENTS_BUILD=${CLIENTS_BUILD:-}
ID_PREFIX="egcl$$"
PIN_ROOT=/sys/fs/bpf/egret
STATE_ROOT=/run/egret
CG2=""
EGRET_CG_PARENT=""
PY=/usr/bin/python3		# Debian's, with its pip: the test user can run it
CLIENT_TIMEOUT=100		# seconds per attempt, a backstop

PKGS4=203.0.113.30 PKGS6=2001:db8:2::30
GIT4=203.0.113.31 GIT6=2001:db8:2::31
MIRROR4=203.0.113.32
WORLD_EXTRA_HOSTS="pkgs.test=$PKGS4,$PKGS6 git.test=$GIT4,$GIT6 mirror.test=$MIRROR4"
CLIENT4=192.0.2.2		# the client namespace's addresses (world.sh)
CLIENT6=2001:db8:1::2
ALLOWED=(--allow pkgs.test:80 --allow "git.test:80,9418")
ALLOWED_TLS=(--allow pkgs.test:443 --allow git.test:443)	# HTTPS only

FIXTURES=""			# fixtures.py's output
CA=""				# its test CA's certificate, for the clients
SRV_LOG=""			# server.py: "conn PEER LOCAL", "req PEER METHOD PATH STATUS";
				# over TLS also "sni PEER NAME", "tls PEER VERSION"
				# and "tls-error PEER REASON"
SRV_SEEN=0			# its lines before the last attempt (client)
GITD_LOG=""			# git daemon --verbose
SRV_PIDS=""

# --- servers ----------------------------------------------------------------

servers_up() {
	local _
	FIXTURES=$(mktemp -d /tmp/egret-clients.XXXXXX) || return 1
	chmod 755 "$FIXTURES"
	"$PY" "$HERE/fixtures.py" "$FIXTURES" || return 1
	CA="$FIXTURES/tls/ca.pem"
	SRV_LOG="$FIXTURES/server.log"
	GITD_LOG="$FIXTURES/git-daemon.log"
	: >"$SRV_LOG"
	nsenter --net="/run/netns/$WORLD_NS" -- "$PY" "$HERE/server.py" "$SRV_LOG" \
		"$FIXTURES/www" "$FIXTURES/git" \
		--tls "$FIXTURES/tls/server.pem" "$FIXTURES/tls/server.key" \
		"$PKGS4:80" "[$PKGS6]:80" "$GIT4:80" "[$GIT6]:80" "$MIRROR4:80" \
		"tls:$PKGS4:443" "tls:[$PKGS6]:443" "tls:$GIT4:443" "tls:[$GIT6]:443" \
		"tls:$MIRROR4:443" >"$FIXTURES/server.out" 2>&1 &
	SRV_PIDS="$!"
	nsenter --net="/run/netns/$WORLD_NS" -- git daemon --verbose --export-all \
		--allow-override=receive-pack --base-path="$FIXTURES/git" --listen="$GIT4" --listen="$GIT6" \
		--listen="$MIRROR4" --port=9418 --reuseaddr "$FIXTURES/git" \
		>"$GITD_LOG" 2>&1 &
	SRV_PIDS="$SRV_PIDS $!"
	for _ in $(seq 100); do
		if grep -q '^ready' "$FIXTURES/server.out" &&
		   world_exec_client git ls-remote "git://$GIT4/hello.git" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
	done
	echo "clients: servers did not start:" >&2
	cat "$FIXTURES/server.out" "$GITD_LOG" >&2
	return 1
}

servers_down() {
	local pid
	for pid in $SRV_PIDS; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	SRV_PIDS=""
	[ -n "$FIXTURES" ] && rm -rf "$FIXTURES"
	FIXTURES=""
}

# Two Go programs: one HTTP GET with Go's own resolver, one through libc
# (cgo). Built once into CLIENTS_BUILD, offline (the standard library only).
go_clients() {
	local dir=$CLIENTS_BUILD
	[ -x "$dir/goget-pure" ] && [ -x "$dir/goget-cgo" ] &&
		[ "$dir/goget-pure" -nt "$HERE/goget.go" ] && return 0
	mkdir -p "$dir" &&
	GOCACHE="$dir/go-cache" CGO_ENABLED=0 \
		go build -o "$dir/goget-pure" "$HERE/goget.go" &&
	GOCACHE="$dir/go-cache" CGO_ENABLED=1 \
		go build -tags netcgo -o "$dir/goget-cgo" "$HERE/goget.go"
}

# --- attempts ---------------------------------------------------------------

# A fresh HOME for COMMAND, owned by the test user (as a miner prepares one
# per attempt). Sets H.
fresh_home() {
	H="$TDIR/home"
	install -d -o "$TEST_UID" -g "$TEST_GID" -m 0700 "$H"
}

# client ARGS... -- COMMAND...: `egret run` as the test user with HOME and
# cwd $H and a clean environment (what a miner passes its agent, and none
# of this machine's PIP_*, npm_config_* ...); sets RC, OUT, ERR. ARGS are
# egret's (the allowed names).
client() {
	local args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	SRV_SEEN=$(wc -l <"$SRV_LOG")
	timeout -k 5 "$CLIENT_TIMEOUT" "${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy none \
		--user "$TEST_USER" --home "$H" --chdir "$H" --clean-env --dns-upstream "$WORLD_DNS" \
		"${args[@]}" -- "$@" >"$TDIR/out" 2>"$TDIR/err"
	RC=$?
	OUT=$(cat "$TDIR/out")
	ERR=$(cat "$TDIR/err")
}

said() {
	echo "[rc=$RC stdout='$OUT' stderr='$ERR']"
}

# Connections the server accepted from the client namespace to ADDR.
conns_to() {	# ADDR
	awk -v peer="$CLIENT4" -v local_addr="$1" \
		'$1 == "conn" && $2 == peer && $3 == local_addr { n++ } END { print n + 0 }' "$SRV_LOG"
}

# Connections git daemon accepted from the client namespace.
gitd_conns() {
	grep -cE "Connection from ($CLIENT4|\[$CLIENT6\]):" "$GITD_LOG"
}

# The server answered the client namespace's METHOD PATH with STATUS.
assert_served() {	# METHOD PATH STATUS WHAT
	grep -qE "^req ($CLIENT4|$CLIENT6) $1 $2 $3\$" "$SRV_LOG" ||
		fail "$4: the server never answered $1 $2 with $3: $(cat "$SRV_LOG")"
}

# The server read an upload of METHOD PATH from the client namespace and
# logged WHAT for it ("BYTES SHA256 FRAMING EXPECT", server.py).
assert_uploaded() {	# METHOD PATH WHAT DESCRIPTION
	grep -qE "^upload ($CLIENT4|$CLIENT6) $1 $2 $3\$" "$SRV_LOG" ||
		fail "$4: the server never read $1 $2 as '$3': $(grep '^upload ' "$SRV_LOG")"
}

# The last attempt's TLS connections: each one's ClientHello asked for NAME
# (and at least one came), every handshake completed, and the server
# answered METHOD PATH with STATUS. With ALLOWED_TLS that answer came over
# HTTPS: egret lets nothing else through to the server.
assert_served_tls() {	# NAME METHOD PATH STATUS WHAT
	local new snis
	new=$(tail -n +$((SRV_SEEN + 1)) "$SRV_LOG")
	snis=$(awk -v p4="$CLIENT4" -v p6="$CLIENT6" '$1 == "sni" && ($2 == p4 || $2 == p6) {
		print $3 }' <<<"$new" | sort -u | paste -sd ' ')
	assert_eq "$1" "$snis" "$5: the SNI the server saw (its log: $new)"
	! grep -qE "^tls-error ($CLIENT4|$CLIENT6) " <<<"$new" ||
		fail "$5: a TLS handshake failed: $new"
	grep -qE "^tls ($CLIENT4|$CLIENT6) TLSv" <<<"$new" ||
		fail "$5: no TLS handshake completed: $new"
	grep -qE "^req ($CLIENT4|$CLIENT6) $2 $3 $4\$" <<<"$new" ||
		fail "$5: the server never answered $2 $3 with $4 over TLS: $new"
}

# COMMAND scripts live in files. Usage: path=$(write_script NAME <<'EOF' ... EOF)
write_script() {
	cat >"$TDIR/$1"
	chmod 755 "$TDIR/$1"
	echo "$TDIR/$1"
}

# Nothing from the client namespace reached the HTTP server at ADDR since
# the count was N0: a barrier connection from outside egret must be the
# only new one (the server logs connections in the order it accepts them).
assert_no_new_conn() {	# ADDR N0 WHAT
	local tok
	tok=$(token barrier)
	world_exec_client curl -sS -o /dev/null "http://$1/$tok" ||
		fail "$3: barrier request to $1 failed"
	wait_until 5 grep -q "^req $CLIENT4 GET /$tok " "$SRV_LOG" ||
		fail "$3: barrier request never logged"
	assert_eq $(($2 + 1)) "$(conns_to "$1")" "$3: connections to $1 (the barrier's only)"
}

assert_no_new_gitd_conn() {	# N0 WHAT
	world_exec_client git ls-remote "git://$MIRROR4/hello.git" >/dev/null 2>&1 ||
		fail "$2: barrier ls-remote failed"
	wait_until 5 test "$(gitd_conns)" -gt "$1" || fail "$2: barrier never logged"
	assert_eq $(($1 + 1)) "$(gitd_conns)" "$2: git daemon connections (the barrier's only)"
}

# The world's resolver never got a question for NAME.
assert_not_asked() {	# NAME WHAT
	world_dns_barrier "$(token b)" || fail "$2: DNS barrier never logged"
	assert_eq 0 "$(world_dns_count "$1")" "$2: queries for $1 that reached the world"
}

# A denied client failed, and says why in terms of the network: never that
# a file was not writable or that the user should be root (what npm says
# about EPERM: "a permissions issue ... try running the command again as
# root"), the hint that sends users the wrong way.
assert_failed_on_network() {	# WHAT
	[ "$RC" != 0 ] || fail "$1: the client succeeded $(said)"
	! grep -qiE 'as root|permission|EACCES|EPERM|not permitted' <<<"$ERR$OUT" ||
		fail "$1: the client blames permissions, not the network $(said)"
}

# Run a denied case twice: NAME (mirror.test) and ADDRESS (203.0.113.32).
# Usage: denied_both WHAT CHECK_KIND COMMAND_WITH_@HOST@...
# CHECK_KIND http (server.py's log) or git (git daemon's log).
denied_both() {
	local what=$1 kind=$2 target n0 args
	shift 2
	for target in mirror.test "$MIRROR4"; do
		fresh_home
		if [ "$kind" = git ]; then n0=$(gitd_conns); else n0=$(conns_to "$MIRROR4"); fi
		args=("${@//@HOST@/$target}")
		client "${ALLOWED[@]}" -- "${args[@]}"
		assert_failed_on_network "$what, $target denied"
		if [ "$kind" = git ]; then
			assert_no_new_gitd_conn "$n0" "$what, $target denied"
		else
			assert_no_new_conn "$MIRROR4" "$n0" "$what, $target denied"
		fi
		rm -rf "$H"
	done
	assert_not_asked mirror.test "$what"
}

# === the tests ===============================================================

# shellcheck source=tests/clients/test_clients.sh
. "$HERE/test_clients.sh"
# shellcheck source=tests/clients/test_egretd_worktree.sh
. "$HERE/test_egretd_worktree.sh"

TESTS=(
	t_client_curl t_client_curl_upload t_client_wget t_client_git_http t_client_git_daemon
	t_client_pip t_client_npm t_client_node t_client_go t_client_resolvers
	t_client_apt t_client_https_curl t_client_https_wget t_client_https_git
	t_client_https_pip t_client_https_npm t_client_https_node t_client_https_go
	t_client_https_python t_client_egretd_worktree t_client_git_push_budget
)

# --time-to-failure: the benchmark instead of the tests (make bench-clients).
if [ "${1:-}" = --time-to-failure ]; then
	# shellcheck source=tests/clients/ttf.sh
	. "$HERE/ttf.sh"
	TESTS=(t_time_to_failure)
	TEST_TIMEOUT=1800
	CLIENT_TIMEOUT=600
	VERBOSE=1
	shift
fi

main() {
	local filter=${1:-} t problem self_cg

	if [ ! -x "$EGRET" ] || [ ! -x "$HELPERS/probe" ] || [ -z "$CLIENTS_BUILD" ]; then
		echo "run.sh: need EGRET, HELPERS and CLIENTS_BUILD; got EGRET='$EGRET'" \
			"HELPERS='$HELPERS' CLIENTS_BUILD='$CLIENTS_BUILD'" >&2
		TESTS_FAILED=1
		summary
		exit 1
	fi
	CG2=$(cgroup2_mount)
	problem=$(preflight_problem wget git node npm go host apt-get dpkg-deb \
		dpkg-scanpackages openssl)
	[ -z "$problem" ] && ! "$PY" -m pip --version >/dev/null 2>&1 &&
		problem="$PY has no pip (package python3-pip)"
	preflight_or_exit "$problem" "the real-client suite" "${#TESTS[@]}"
	if ! suite_cgroup_enter; then
		echo "FAIL  suite_cgroup_enter: could not make the suite's cgroup under $CG2"
		TESTS_FAILED=1
		summary
		exit 1
	fi

	if ! go_clients; then
		echo "FAIL  go build: could not build the Go clients"
		suite_cgroup_leave
		TESTS_FAILED=1
		summary
		exit 1
	fi
	if ! world_up || ! servers_up; then
		echo "FAIL  world_up: could not build the test world and its servers"
		suite_cgroup_leave
		TESTS_FAILED=1
		summary
		exit 1
	fi
	trap 'test_tidy >/dev/null 2>&1; servers_down; world_down; suite_gc >/dev/null 2>&1; suite_cgroup_leave' EXIT
	trap 'exit 130' INT TERM

	for t in "${TESTS[@]}"; do
		[ -n "$filter" ] && ! [[ $t =~ $filter ]] && continue
		run_test "$t"
	done
	summary
}

main "$@"
