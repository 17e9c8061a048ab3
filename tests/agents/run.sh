#!/usr/bin/env bash
# run.sh - the real agent CLIs (tests/agents/versions: Claude Code, Codex,
# Gemini CLI, exact versions from the npm registry) driven through one
# real task each by mock model APIs of our own, confined by egret.
#
#   EGRET=/abs/build/egret HELPERS=/abs/build/helpers tests/agents/run.sh [REGEX]
#   ... tests/agents/run.sh --measure CLI      what CLI reaches, allowed only
#                                              its model API (README.md)
#
# The world (tests/world/world.sh) gets a second resolver, 198.51.100.54,
# that knows only the task's hosts, each on addresses of its own (AG_HOSTS:
# api.anthropic.com 203.0.113.40 and 2001:db8:2::40, api.openai.com .41,
# generativelanguage.googleapis.com .42, registry.npmjs.org .43, git.test
# .44), served by mockworld.py over HTTPS with a certificate from a CA
# made at start.
# The CLIs run unmodified against those real names (no base URL set): the
# profile's hosts are what egret allows, the test CA what they trust.
#
# Each CLI, under root `egret run` and through egretd as a non-root caller,
# with a policy of `agents: [CLI]`, `ecosystems: [npm]` and the git remote
# and nothing else, must: finish the task (its answer says TASK DONE, the
# clone holds the agent's commit, npm test passed), leave its exit summary
# with no denial that needs attention (its noise counted as quiet), and
# leave `egret requests list` empty for its repository.
#
# t_agent_claude_feed_*: Claude Code, docs/AGENTS.md's instruction line
# appended to its system prompt, on a task that needs another vendor's
# model API (api.mistral.ai, .45, in the world and in no policy): it must
# read $EGRET_LIMITS, call the API once, read $EGRET_DENIALS, and stop with
# the feed's reason in its answer (README.md, "The denial feed").
# AG_TRANSCRIPT=DIR keeps each run's transcript there.
#
# Needs what the integration suite needs, git, node, npm, python3, openssl
# and the CLIs (tools/install-deps.sh installs them under
# /opt/egret-agents). Without them it skips (exit 0), except with CI=true,
# where that is a failure.
# shellcheck disable=SC2015,SC2016 # `A && B || fail` is meant (fail exits); $1 in single quotes is the inner shell's
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
AGENTS_DIR=${AGENTS_DIR:-/opt/egret-agents}
export AGENTS_DIR
ID_PREFIX="egag$$"
PIN_ROOT=/sys/fs/bpf/egret
STATE_ROOT=/run/egret
CG2=""
EGRET_CG_PARENT=""
PY=/usr/bin/python3
AGENT_TIMEOUT=240		# seconds per attempt, a backstop
TEST_TIMEOUT=600

AG_DNS=198.51.100.54		# the task's resolver
AG_HOSTS="api.anthropic.com=203.0.113.40,2001:db8:2::40
api.openai.com=203.0.113.41,2001:db8:2::41
generativelanguage.googleapis.com=203.0.113.42,2001:db8:2::42
registry.npmjs.org=203.0.113.43,2001:db8:2::43 git.test=203.0.113.44,2001:db8:2::44
api.mistral.ai=203.0.113.45,2001:db8:2::45"
AG_REMOTE=https://git.test/git/app.git
AG_FIX=""			# mockworld.py's directory (outside /tmp: egretd's
				# attempts have a /tmp of their own)
AG_LOG=""			# its log: "host PEER HOST METHOD PATH STATUS BYTES"
AG_PIDS=""
AG_ARGS=()			# agent.sh's arguments after CLI, if not the task's prompt
AG_DNS_SEEN=0			# the resolver's log lines before the last attempt
AG_LOG_SEEN=0			# AG_LOG's lines before the last feed task
CA=""

# --- the world's task servers ----------------------------------------------

agents_world_up() {
	local h a _
	AG_FIX=/run/egret-tests/agents-$$
	mkdir -p "$AG_FIX" && chmod 755 /run/egret-tests "$AG_FIX" || return 1
	AG_LOG=$AG_FIX/server.log
	CA=$AG_FIX/tls/ca.pem
	# COMMAND, where an egretd attempt sees it (a checkout under /tmp
	# would not be: its /tmp is its own).
	cp "$HERE/agent.sh" "$HERE/versions" "$AG_FIX/" && chmod 755 "$AG_FIX/agent.sh" || return 1
	: >"$AG_LOG"
	# Each name A and AAAA: a name without AAAA would get REFUSED for
	# it from dnsmasq (no upstream), which musl (Codex) takes as failure.
	for h in $AG_HOSTS; do
		a=${h#*=}
		world_exec_world ip addr add "${a%,*}/32" dev lo || return 1
		world_exec_world ip -6 addr add "${a#*,}/128" dev lo nodad || return 1
		echo "host-record=${h%%=*},$a"
	done >"$AG_FIX/dnsmasq.conf"
	world_exec_world ip addr add "$AG_DNS/32" dev lo || return 1
	: >"$AG_FIX/dns.log"
	nsenter --net="/run/netns/$WORLD_NS" -- dnsmasq --keep-in-foreground \
		--conf-file="$AG_FIX/dnsmasq.conf" --no-resolv --no-hosts --user=root \
		--pid-file= --bind-interfaces --listen-address="$AG_DNS" --local-ttl=600 \
		--log-queries --log-facility="$AG_FIX/dns.log" 2>>"$AG_FIX/dnsmasq.err" &
	AG_PIDS="$!"
	# shellcheck disable=SC2046 # one spec per address
	nsenter --net="/run/netns/$WORLD_NS" -- env ${MOCKWORLD_DUMP:+MOCKWORLD_DUMP="$MOCKWORLD_DUMP"} \
		"$PY" "$HERE/mockworld.py" "$AG_FIX" "$AG_LOG" \
		$(for h in $AG_HOSTS; do a=${h#*=}; echo "tls:${a%,*}:443 tls:[${a#*,}]:443"; done) \
		>"$AG_FIX/server.out" 2>&1 &
	AG_PIDS="$AG_PIDS $!"
	for _ in $(seq 100); do
		grep -q '^ready' "$AG_FIX/server.out" 2>/dev/null &&
			[ "$(world_exec_client dig +short +time=1 +tries=1 @"$AG_DNS" git.test 2>/dev/null)" = 203.0.113.44 ] &&
			return 0
		sleep 0.1
	done
	echo "agents: the task servers did not start:" >&2
	cat "$AG_FIX/server.out" "$AG_FIX/dnsmasq.err" >&2
	return 1
}

agents_world_down() {
	local pid
	for pid in $AG_PIDS; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	AG_PIDS=""
	[ -n "$AG_FIX" ] && rm -rf "$AG_FIX"
	AG_FIX=""
}

# --- attempts ---------------------------------------------------------------

# What every CLI gets: its API key (a test's; the mock checks none), the
# test CA the way each client takes one, a PATH with node.
AG_ENV=()
agents_env() {
	AG_ENV=(--clean-env --setenv PATH=/usr/local/bin:/usr/bin:/bin
		--setenv ANTHROPIC_API_KEY=sk-ant-egret-test --setenv OPENAI_API_KEY=sk-egret-test
		--setenv GEMINI_API_KEY=egret-test
		--setenv NODE_EXTRA_CA_CERTS="$CA" --setenv CODEX_CA_CERTIFICATE="$CA"
		--setenv GIT_SSL_CAINFO="$CA" --setenv npm_config_cafile="$CA")
}

# The prompt of the task in DIR (models.py reads it).
prompt_for() {	# DIR
	echo "egret-task dir=$1 remote=$AG_REMOTE"
}

# agent_root CLI WORKDIR ARGS...: CLI on the task in WORKDIR under root
# `egret run` as the test user, with egret's ARGS; sets RC, OUT, ERR.
agent_root() {
	local cli=$1 work=$2
	shift 2
	install -d -o "$TEST_UID" -g "$TEST_GID" -m 0755 "$work" "$TDIR/home"
	AG_DNS_SEEN=$(wc -l <"$AG_FIX/dns.log")
	timeout -k 5 "$AGENT_TIMEOUT" "${WORLD_IN_CLIENT[@]}" "$EGRET" run \
		--user "$TEST_USER" --home "$TDIR/home" --chdir "$work" "${AG_ENV[@]}" \
		--dns-upstream "$AG_DNS" --id "$ID_PREFIX-$cli-$RANDOM" "$@" \
		-- "$AG_FIX/agent.sh" "$cli" "${AG_ARGS[@]:-$(prompt_for "$work")}" \
		>"$TDIR/out" 2>"$TDIR/err"
	RC=$?
	OUT=$(cat "$TDIR/out")
	ERR=$(cat "$TDIR/err")
}

said() {
	echo "[rc=$RC stdout='$OUT' stderr='$ERR']"
}

# The task was done: the CLI's answer, npm test's line, the agent's commit
# in the clone (read with egret git: the clone is the attempt's work).
assert_task_done() {	# WORKDIR WHAT
	assert_contains "TASK DONE" "$OUT" "$2: the CLI's last answer $(said)"
	[ -e "$1/app/node_modules/egret-hello/index.js" ] ||
		fail "$2: npm install left no egret-hello in $1/app $(said)"
	assert_eq "npm install: the lockfile" \
		"$("${AS_TEST_USER[@]}" "$EGRET" git -C "$1/app" log -1 --format=%s 2>&1)" \
		"$2: the agent's commit"
	grep -q '"egret-hello"' "$1/app/package-lock.json" ||
		fail "$2: the committed lockfile lacks egret-hello"
}

# The policy every test runs under: the profile, npm, the git remote.
write_policy() {	# FILE CLI [EXTRA_YAML]
	mkdir -p "$(dirname "$1")" && chmod 755 "$(dirname "$1")"
	printf 'version: 1\nagents: [%s]\necosystems: [npm]\ngit_remote: true\n%s' "$2" "${3:-}" >"$1"
	chmod 644 "$1"
}

# What each CLI asked for in its measured run that its profile makes
# quiet (user/policy/catalog.yaml): each must show in the summary as quiet.
declare -A AG_QUIET_SEEN=(
	[claude-code]=""
	[codex]="ab.chatgpt.com chatgpt.com api.github.com github.com"
	[gemini-cli]="play.googleapis.com"
)

# After an attempt of CLI under the profile: no denial needing attention
# in its summary, its noise there as quiet, none of it sent to the world's
# resolver, no request in the store STATE (for any repository).
assert_quiet_attempt() {	# CLI STATE WHAT
	local name
	! grep -qE '^egret: +(denied|name denied|DNS failed) ' <<<"$ERR" ||
		fail "$3: the summary has denials that need attention $(said)"
	for name in ${AG_QUIET_SEEN[$1]}; do
		grep -qE "^egret: +quiet +[0-9]+ x $name: " <<<"$ERR" ||
			fail "$3: $name is not counted as quiet in the summary $(said)"
		! tail -n +$((AG_DNS_SEEN + 1)) "$AG_FIX/dns.log" | grep -qE "query\[[A-Z]+\] $name " ||
			fail "$3: the world's resolver was asked for the quiet name $name"
	done
	[ -z "${AG_QUIET_SEEN[$1]}" ] || grep -qE '^egret: attempt .* [0-9]+ quiet, ' <<<"$ERR" ||
		fail "$3: no quiet count on the summary's first line $(said)"
	assert_eq "no requests" "$("$EGRET" requests list --all --state-dir "$2" 2>&1)" \
		"$3: egret requests list"
}

# agent_root_case CLI: under root `egret run`, --repo and --git-remote.
agent_root_case() {
	local cli=$1
	write_policy "$TDIR/etc/policy.yaml" "$cli"
	agents_env
	agent_root "$cli" "$TDIR/work" --policy "$TDIR/etc/policy.yaml" --repo acme/agent \
		--state-dir "$TDIR/state" --git-remote "$AG_REMOTE"
	assert_eq 0 "$RC" "$cli under root egret run: exit status $(said)"
	assert_task_done "$TDIR/work" "$cli under root egret run"
	assert_quiet_attempt "$cli" "$TDIR/state" "$cli under root egret run"
}

# --- through egretd ----------------------------------------------------------

# egretd in the client namespace, with POLICY as its /etc/egret/policy.yaml
# (an overlay over /etc in a mount namespace of its own: the host's /etc
# is not touched; its resolv.conf names the task's resolver) and the test
# user as its caller, who may select acme/agent. Sets AG_SOCK, AG_EGRETD,
# AG_STATE (kept after it stops, in a directory of the test's own).
agents_egretd_start() {	# POLICY
	local dir=$AG_FIX/egretd-$BASHPID i
	mkdir -p "$dir/etc/egret" && chmod 755 "$dir" "$dir/etc" "$dir/etc/egret" || return 1
	cp "$1" "$dir/etc/egret/policy.yaml" && chmod 644 "$dir/etc/egret/policy.yaml"
	echo "nameserver $AG_DNS" >"$dir/etc/resolv.conf" && chmod 644 "$dir/etc/resolv.conf"
	chown "$TEST_UID:$TEST_GID" "$TDIR"
	AG_SOCK=$dir/egret.sock AG_STATE=$dir/state
	cat >"$dir/egretd.yaml" <<CONF
version: 1
socket:
  path: $AG_SOCK
  group: $TEST_GID
attempts:
  uids: $(own_uid 600)-$(own_uid 609)
  max: 2
  state_dir: $AG_STATE
callers:
  - user: $TEST_USER
    repos: [acme/agent]
    git_remote: [git.test]
CONF
	chmod 644 "$dir/egretd.yaml"
	"${WORLD_IN_CLIENT[@]}" unshare --mount sh -c \
		'mount -t overlay overlay -o "lowerdir=$1:/etc" /etc && shift && exec "$@"' sh \
		"$dir/etc" "$(dirname "$EGRET")/egretd" --config "$dir/egretd.yaml" \
		>"$TDIR/egretd.log" 2>&1 &
	AG_EGRETD=$!
	for ((i = 0; i < 100; i++)); do
		"$PY" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])' "$AG_SOCK" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "egretd never listened: $(cat "$TDIR/egretd.log")"
}

agents_egretd_stop() {
	local u
	kill -TERM "$AG_EGRETD" 2>/dev/null
	wait "$AG_EGRETD" 2>/dev/null
	for ((u = $(own_uid 600); u <= $(own_uid 609); u++)); do
		rm -f "/run/egret-uids/owner-$u"
	done
}

# agent_via CLI WORKDIR ARGS...: the caller, in WORKDIR, with the task's
# resolver in its /etc/resolv.conf (egretd takes a caller's upstreams
# from there): `egret run --via ... ARGS -- agent.sh CLI PROMPT`. The
# caller has a mount namespace of its own, so egretd serves it as it
# serves a container (COMMAND in its caller's mounts, docs/DEPLOYMENT.md),
# or, with AG_VIA_MOUNTS=egretd, egretd's, as a caller on egretd's host
# is served (COMMAND in egretd's mounts, with its limits manifest).
AG_VIA_MOUNTS=own
agent_via() {
	local cli=$1 work=$2 into
	shift 2
	install -d -o "$TEST_UID" -g "$TEST_GID" -m 0755 "$work"
	echo "nameserver $AG_DNS" >"$TDIR/resolv.conf"
	into=(unshare --mount sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"'
		sh "$TDIR/resolv.conf")
	[ "$AG_VIA_MOUNTS" = own ] || into=(nsenter --mount="/proc/$AG_EGRETD/ns/mnt" --)
	AG_DNS_SEEN=$(wc -l <"$AG_FIX/dns.log")
	timeout -k 5 "$AGENT_TIMEOUT" "${WORLD_IN_CLIENT[@]}" "${into[@]}" \
		"${AS_TEST_USER[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$work" \
		"$EGRET" run --via "$AG_SOCK" "$@" -- "$AG_FIX/agent.sh" "$cli" \
		"${AG_ARGS[@]:-$(prompt_for "$work")}" >"$TDIR/out" 2>"$TDIR/err"
	RC=$?
	OUT=$(cat "$TDIR/out")
	ERR=$(cat "$TDIR/err")
}

# agent_egretd_case CLI: through egretd as the unprivileged test user.
agent_egretd_case() {
	local cli=$1
	# The forge from --git-remote, as root's run gets it: the caller's
	# entry lets it name a remote on git.test (callers.git_remote).
	write_policy "$TDIR/policy.yaml" "$cli" ''
	agents_egretd_start "$TDIR/policy.yaml"
	agents_env
	agent_via "$cli" "$TDIR/work" --repo acme/agent --git-remote "$AG_REMOTE" "${AG_ENV[@]}"
	agents_egretd_stop
	assert_eq 0 "$RC" "$cli through egretd: exit status $(said) egretd: $(cat "$TDIR/egretd.log")"
	assert_task_done "$TDIR/work" "$cli through egretd"
	assert_quiet_attempt "$cli" "$AG_STATE" "$cli through egretd"
}

# The quiet rule without a CLI: under `agents: [codex]`, its noise
# (ab.chatgpt.com, chatgpt.com) gets NXDOMAIN, never reaches the world's
# resolver, is counted as quiet and becomes no request, nor a suggestion;
# a name no rule knows (evil.test) is a denial and a request as ever. A
# repository that lists chatgpt.com gets it (an allow wins over quiet).
t_agent_quiet_rule() {
	local script='for n in ab.chatgpt.com chatgpt.com evil.test; do
		getent hosts "$n" >/dev/null; echo "$n $?"; done' out
	write_policy "$TDIR/etc/policy.yaml" codex 'repos:
  acme/work:
    hosts: ["chatgpt.com:443"]
'
	install -d -o "$TEST_UID" -m 0755 "$TDIR/home"
	AG_DNS_SEEN=$(wc -l <"$AG_FIX/dns.log")
	timeout 60 "${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy "$TDIR/etc/policy.yaml" \
		--repo acme/agent --state-dir "$TDIR/state" --log "$TDIR/events.json" \
		--user "$TEST_USER" --home "$TDIR/home" --dns-upstream "$AG_DNS" -- sh -c "$script" \
		>"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	assert_eq "ab.chatgpt.com 2
chatgpt.com 2
evil.test 2" "$OUT" "lookups of quiet names and a denied one $(said)"
	grep -qE '^egret: attempt .*DNS 0 answered, [0-9]+ names denied, [0-9]+ quiet, 0 failed' <<<"$ERR" ||
		fail "the summary's quiet count $(said)"
	grep -qE '^egret: +quiet +[0-9]+ x ab.chatgpt.com: ' <<<"$ERR" ||
		fail "ab.chatgpt.com is not quiet in the summary $(said)"
	grep -qE '^egret: +name denied +[0-9]+ x evil.test: ' <<<"$ERR" ||
		fail "evil.test is not a denial in the summary $(said)"
	! grep -qE 'x (ab\.)?chatgpt\.com: not allowed|dns: denied (ab\.)?chatgpt' <<<"$ERR" ||
		fail "a quiet name shown as a denial $(said)"
	out=$("$EGRET" requests list --all --state-dir "$TDIR/state" 2>&1)
	assert_contains "evil.test (lookup)" "$out" "the denied name's request"
	! grep -q chatgpt <<<"$out" || fail "a quiet name became a request: $out"
	grep -q '"reason":"quiet"' "$TDIR/events.json" || fail "no quiet record in the log"
	out=$("$EGRET" suggest "$TDIR/events.json" 2>&1)
	assert_contains "evil.test" "$out" "egret suggest"
	! grep -q chatgpt <<<"$out" || fail "egret suggest proposes a quiet name: $out"
	! tail -n +$((AG_DNS_SEEN + 1)) "$AG_FIX/dns.log" |
		grep -qE 'query\[[A-Z]+\] (ab\.)?chatgpt\.com ' ||
		fail "a quiet name reached the world's resolver"
	out=$("$EGRET" check --policy "$TDIR/etc/policy.yaml" --repo acme/agent --json | jq -c \
		'[.quiet[] | select(.name == "ab.chatgpt.com")][0] | [.from, .in_force]')
	assert_eq '["agents: codex",true]' "$out" "egret check --json on a quiet name"

	# The repository that lists chatgpt.com: it is asked upstream.
	timeout 60 "${WORLD_IN_CLIENT[@]}" "$EGRET" run --policy "$TDIR/etc/policy.yaml" \
		--repo acme/work --state-dir "$TDIR/state" --user "$TEST_USER" --home "$TDIR/home" \
		--dns-upstream "$AG_DNS" -- sh -c "$script" >"$TDIR/out" 2>"$TDIR/err"
	RC=$? OUT=$(cat "$TDIR/out") ERR=$(cat "$TDIR/err")
	grep -qE 'query\[[A-Z]+\] chatgpt\.com ' "$AG_FIX/dns.log" ||
		fail "chatgpt.com, listed for acme/work, was never asked upstream $(said)"
	! grep -qE 'x chatgpt.com: ' <<<"$ERR" || fail "chatgpt.com refused for acme/work $(said)"
	out=$("$EGRET" check --policy "$TDIR/etc/policy.yaml" --repo acme/work --json | jq -c \
		'[.quiet[] | select(.name == "chatgpt.com")][0].in_force')
	assert_eq false "$out" "egret check: chatgpt.com is not quiet where it is listed"
}

# Codex's own sandbox (--sandbox workspace-write: bubblewrap) nested in the
# attempt with --nested-sandbox: the task runs through it, inside egret's
# rules (tests/integration/test_agents_ready.sh, t_nested_sandbox, shows
# what a nested sandbox cannot undo); without the option Codex's sandbox
# cannot start.
t_agent_codex_nested_sandbox() {
	write_policy "$TDIR/etc/policy.yaml" codex
	agents_env
	# --view: its HOME outside /tmp, which Codex's sandbox mounts anew
	# (the helper Codex puts in ~/.codex must stay in its sight).
	# npm's cache in the workspace: Codex's sandbox lets its commands write
	# the workspace and nothing of HOME.
	agent_root codex-sandboxed "$TDIR/work" --policy "$TDIR/etc/policy.yaml" --repo acme/agent \
		--state-dir "$TDIR/state" --git-remote "$AG_REMOTE" --nested-sandbox \
		--view --home /run/egret-home --setenv npm_config_cache="$TDIR/work/.npm-cache"
	assert_eq 0 "$RC" "codex --sandbox workspace-write under --nested-sandbox $(said)"
	assert_task_done "$TDIR/work" "codex in its own sandbox"
	assert_quiet_attempt codex "$TDIR/state" "codex in its own sandbox"
	# The control: without --nested-sandbox its sandbox cannot start.
	agent_root codex-sandboxed "$TDIR/work2" --policy "$TDIR/etc/policy.yaml" --repo acme/agent \
		--state-dir "$TDIR/state" --git-remote "$AG_REMOTE" \
		--view --home /run/egret-home --setenv npm_config_cache="$TDIR/work2/.npm-cache"
	assert_contains "bwrap: " "$OUT" "control: Codex's sandbox without --nested-sandbox $(said)"
	! grep -q "TASK DONE" <<<"$OUT" || fail "control: the task ran without Codex's sandbox $(said)"
}

# --- the denial feed: Claude Code told of a refusal (issue 43) ---------------

# Another vendor's model API the task asks for: in the world (mockworld.py
# serves it), in no profile of user/policy/catalog.yaml and in no policy
# here. The model that drives Claude Code stays reachable (its profile);
# this is the API that is denied.
AG_FEED_API=api.mistral.ai
AG_FEED_MAX_ASKED=3		# one curl: an A and an AAAA lookup

# docs/AGENTS.md's instruction line, as an operator copies it.
agents_line() {
	sed -n '/^## What to put in an agent.s instructions/,/^## /p' "$HERE/../../docs/AGENTS.md" |
		awk '/^> /{ sub(/^> /, ""); print; exit }'
}

# The feed task's prompt: models.py's marker, then the task in words.
feed_prompt() {
	echo "egret-feed-task api=$AG_FEED_API: list the models Mistral's API offers" \
		"(GET https://$AG_FEED_API/v1/models) and tell me which there are."
}

# What Claude Code printed (--output-format stream-json): the final
# answer; the tool calls' commands, one a line; their results, one JSON
# string a line.
feed_answer() { jq -rs 'map(select(.type == "result"))[-1].result // empty' <<<"$OUT"; }
feed_calls() {
	jq -r 'select(.type == "assistant") | .message.content[]? |
		select(.type == "tool_use") | .input.command' <<<"$OUT"
}
feed_results() {
	jq -c 'select(.type == "user") | .message.content[]? | select(.type == "tool_result") |
		.content | if type == "array" then map(.text? // "") | join("\n") else . end' <<<"$OUT"
}
# The mock model's notes since the attempt began (mockworld.py's log):
# one JSON object a line, what it received and what it decided.
feed_notes() { tail -n +$((AG_LOG_SEEN + 1)) "$AG_LOG" | sed -n 's/^model //p'; }

# A short account of the run for a failure message: not the whole stream.
feed_said() {
	echo "[rc=$RC answer='$(feed_answer)' calls='$(feed_calls)' stderr='$(grep -v '^{' <<<"$ERR")']"
}

# After the feed task with the instruction line: Claude Code read the
# manifest, called the API once, read the feed and stopped, its answer
# quoting the feed's reason; egret refused the name a bounded few times;
# it is a request for acme/agent in STATE.
assert_feed_stopped() {	# STATE WHAT
	local what=$2 answer calls results notes got n line
	answer=$(feed_answer) calls=$(feed_calls) results=$(feed_results) notes=$(feed_notes)
	assert_eq 0 "$RC" "$what: exit status $(feed_said)"
	assert_eq 'cat "$EGRET_LIMITS"
curl -sS --max-time 10 https://'"$AG_FEED_API"'/v1/models
tail -n 20 "$EGRET_DENIALS"' "$calls" "$what: Claude Code's tool calls $(feed_said)"
	# What the tools gave back: the manifest (naming the profile's API),
	# the name refused as NXDOMAIN, the feed's line for it.
	got=$(jq -r . <<<"$(sed -n 1p <<<"$results")")
	assert_contains "api.anthropic.com" "$got" "$what: the manifest Claude Code read"
	! grep -qF "$AG_FEED_API" <<<"$got" || fail "$what: the manifest names $AG_FEED_API: $got"
	got=$(jq -r . <<<"$(sed -n 2p <<<"$results")")
	assert_contains "Could not resolve host: $AG_FEED_API" "$got" "$what: the call's result"
	# The mock model's own record of the feed's text it received, and the
	# line it found there: the refusal of the name, with its reason.
	line=$(jq -c 'select(.received.command == "tail -n 20 \"$EGRET_DENIALS\"") |
		.received.output | split("\n")[] | (try fromjson catch empty) |
		select(.name == "'"$AG_FEED_API"'" and .verdict == "deny")' <<<"$notes" | head -n 1)
	[ -n "$line" ] || fail "$what: the model received no feed line refusing $AG_FEED_API: $notes"
	assert_eq "dns not-allowed NXDOMAIN" "$(jq -r '"\(.kind) \(.reason) \(.answer)"' <<<"$line")" \
		"$what: the feed's line"
	jq -e 'select(.instructed.limits and .instructed.denials)' <<<"$notes" >/dev/null ||
		fail "$what: the model never saw the instruction line in its system prompt: $notes"
	# The answer: the refusal, in the feed's words, and no retry.
	assert_contains "REFUSED $AG_FEED_API after 1 call." "$answer" "$what: the answer $(feed_said)"
	assert_contains "why: \"$(jq -r .why <<<"$line")\"" "$answer" "$what: the feed's why in the answer"
	assert_contains "hint: \"$(jq -r .hint <<<"$line")\"" "$answer" \
		"$what: the feed's hint in the answer"
	assert_contains "not allowed by the policy" "$answer" "$what: the reason in the answer"
	# egret: the name refused a few times (one curl's lookups), never
	# asked upstream, never reached; a request for the repository.
	n=$(sed -En "s/^egret: +name denied +([0-9]+) x $AG_FEED_API: .*/\1/p" <<<"$ERR")
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le "$AG_FEED_MAX_ASKED" ] ||
		fail "$what: $AG_FEED_API refused '$n' times, want 1 to $AG_FEED_MAX_ASKED $(feed_said)"
	! grep -q "COMMAND keeps trying the name $AG_FEED_API" <<<"$ERR" ||
		fail "$what: egret saw COMMAND keep trying $AG_FEED_API $(feed_said)"
	! tail -n +$((AG_DNS_SEEN + 1)) "$AG_FIX/dns.log" | grep -qE "query\[[A-Z]+\] $AG_FEED_API " ||
		fail "$what: the world's resolver was asked for $AG_FEED_API"
	! tail -n +$((AG_LOG_SEEN + 1)) "$AG_LOG" | awk '$1 == "host" { print $3 }' |
		grep -qxF "$AG_FEED_API" ||
		fail "$what: $AG_FEED_API was reached"
	# The refusal of an attempt with --repo: a pending request, the only one.
	got=$("$EGRET" requests list --all --state-dir "$1" 2>&1)
	n=$(awk -v n="$AG_FEED_API" '$2 == "pending" && $3 == "acme/agent" && $4 == n &&
		$5 == "(lookup)" && $6 == "dns" { print $7 }' <<<"$got")
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -le "$AG_FEED_MAX_ASKED" ] && [ "$(wc -l <<<"$got")" -eq 2 ] ||
		fail "$what: egret requests list, want one pending lookup of $AG_FEED_API: $got"
}

# feed_run ROOT|VIA WORK SYSTEM ARGS...: the feed task, Claude Code with
# SYSTEM appended to its system prompt (none if empty).
feed_run() {
	local how=$1 work=$2
	AG_ARGS=("$(feed_prompt)" "$3")
	shift 3
	AG_LOG_SEEN=$(wc -l <"$AG_LOG")
	if [ "$how" = root ]; then
		agent_root claude-code-feed "$work" "$@"
	else
		agent_via claude-code-feed "$work" "$@"
	fi
	AG_ARGS=()
}

# AG_TRANSCRIPT=DIR: the run kept in DIR as NAME.md (readable:
# transcript.jq, then egret's exit summary and its requests in STATE),
# NAME.stream.jsonl (all Claude Code printed), NAME.stderr and
# NAME.model.jsonl (the mock model's notes).
feed_keep() {	# NAME SYSTEM STATE
	local d=${AG_TRANSCRIPT:-}
	[ -n "$d" ] || return 0
	mkdir -p "$d" && cp "$TDIR/out" "$d/$1.stream.jsonl" && cp "$TDIR/err" "$d/$1.stderr" &&
		feed_notes >"$d/$1.model.jsonl" || fail "AG_TRANSCRIPT: cannot write $d"
	jq -rs --arg system "$2" --arg prompt "$(feed_prompt)" -f "$HERE/transcript.jq" \
		"$TDIR/out" >"$d/$1.md" || fail "AG_TRANSCRIPT: transcript.jq failed on $d/$1.stream.jsonl"
	printf '\n**egret** (its exit summary, on stderr):\n\n```\n%s\n```\n' \
		"$(grep '^egret: ' "$TDIR/err")" >>"$d/$1.md"
	printf '\n**egret requests list --all** (afterwards):\n\n```\n%s\n```\n' \
		"$("$EGRET" requests list --all --state-dir "$3" 2>&1)" >>"$d/$1.md"
}

# Root `egret run`, the profile's policy: the run with the instruction
# line; then two controls. Without the line the same mock model (never
# told of the feed) calls again until it gives up: what the bound on the
# name's refusals catches. With the name allowed it is reached: the
# refusal was the policy's, not the world's.
t_agent_claude_feed_root() {
	local line n
	line=$(agents_line)
	[ -n "$line" ] || fail "no instruction line in docs/AGENTS.md"
	write_policy "$TDIR/etc/policy.yaml" claude-code
	agents_env
	feed_run root "$TDIR/work" "$line" --policy "$TDIR/etc/policy.yaml" --repo acme/agent \
		--state-dir "$TDIR/state" --log "$TDIR/events.json" --setenv CURL_CA_BUNDLE="$CA"
	feed_keep root "$line" "$TDIR/state"
	assert_feed_stopped "$TDIR/state" "Claude Code told of the feed, under root egret run"
	# egret's log agrees with its summary: each refusal of the name one line.
	n=$(jq -s --arg n "$AG_FEED_API" 'map(select(.kind == "dns" and .verdict == "deny" and
		.name == $n) | 1 + (.repeats // 0)) | add // 0' "$TDIR/events.json")
	[ "$n" -ge 1 ] && [ "$n" -le "$AG_FEED_MAX_ASKED" ] ||
		fail "egret's log: $AG_FEED_API refused $n times, want 1 to $AG_FEED_MAX_ASKED"

	feed_run root "$TDIR/work2" "" --policy "$TDIR/etc/policy.yaml" --repo acme/agent \
		--state-dir "$TDIR/state2" --setenv CURL_CA_BUNDLE="$CA"
	feed_keep control "" "$TDIR/state2"
	assert_eq 0 "$RC" "control: exit status $(feed_said)"
	assert_contains "FAILED: $AG_FEED_API did not answer after 5 calls" "$(feed_answer)" \
		"control: the answer $(feed_said)"
	assert_eq 5 "$(feed_calls | grep -c "https://$AG_FEED_API/")" "control: calls $(feed_said)"
	! feed_calls | grep -q EGRET_ ||
		fail "control: the model read the manifest or the feed $(feed_said)"
	n=$(sed -En "s/^egret: +name denied +([0-9]+) x $AG_FEED_API: .*/\1/p" <<<"$ERR")
	[[ $n =~ ^[0-9]+$ ]] && [ "$n" -gt "$AG_FEED_MAX_ASKED" ] ||
		fail "control: $AG_FEED_API refused '$n' times, want more than $AG_FEED_MAX_ASKED $(feed_said)"

	feed_run root "$TDIR/work3" "$line" --policy "$TDIR/etc/policy.yaml" --repo acme/agent \
		--state-dir "$TDIR/state3" --setenv CURL_CA_BUNDLE="$CA" --allow "$AG_FEED_API:443"
	feed_keep allowed "$line" "$TDIR/state3"
	assert_eq 0 "$RC" "control, $AG_FEED_API allowed: exit status $(feed_said)"
	assert_contains "REACHED $AG_FEED_API: " "$(feed_answer)" \
		"control, $AG_FEED_API allowed: the answer $(feed_said)"
	assert_contains "mistral-mock-latest" "$(feed_answer)" \
		"control, $AG_FEED_API allowed: the answer $(feed_said)"
	tail -n +$((AG_LOG_SEEN + 1)) "$AG_LOG" | awk '$1 == "host" { print $3, $4, $5, $6 }' |
		grep -qxF "$AG_FEED_API GET /v1/models 200" ||
		fail "control, $AG_FEED_API allowed: the server never answered it"
}

# Through egretd as the unprivileged test user: the same run. The caller
# is in egretd's mount namespace (AG_VIA_MOUNTS): a caller in a mount
# namespace of its own is served as a container is, in its own mounts,
# where egret makes no manifest (docs/AGENTS.md, "When there is no
# manifest").
t_agent_claude_feed_egretd() {
	local line
	line=$(agents_line)
	[ -n "$line" ] || fail "no instruction line in docs/AGENTS.md"
	write_policy "$TDIR/policy.yaml" claude-code ''
	agents_egretd_start "$TDIR/policy.yaml"
	agents_env
	AG_VIA_MOUNTS=egretd
	feed_run via "$TDIR/work" "$line" --repo acme/agent "${AG_ENV[@]}" \
		--setenv CURL_CA_BUNDLE="$CA"
	agents_egretd_stop
	feed_keep egretd "$line" "$AG_STATE"
	assert_feed_stopped "$AG_STATE" "Claude Code told of the feed, through egretd"
}

t_agent_claude_code_root() { agent_root_case claude-code; }
t_agent_codex_root() { agent_root_case codex; }
t_agent_gemini_cli_root() { agent_root_case gemini-cli; }
t_agent_claude_code_egretd() { agent_egretd_case claude-code; }
t_agent_codex_egretd() { agent_egretd_case codex; }
t_agent_gemini_cli_egretd() { agent_egretd_case gemini-cli; }

# --measure CLI: the CLI on the task with only its model API, the forge
# and the registry allowed (--policy none, no profile), every denial
# shown: what the profile's hosts and quiet list come from.
t_measure() {
	local cli=$MEASURE api
	case $cli in
	claude-code) api=api.anthropic.com ;;
	codex) api=api.openai.com ;;
	gemini-cli) api=generativelanguage.googleapis.com ;;
	*) fail "--measure: no such CLI $cli" ;;
	esac
	agents_env
	agent_root "$cli" "$TDIR/work" --policy none --allow "$api:443" \
		--allow git.test:443 --allow registry.npmjs.org:443 --log "$TDIR/events.json" \
		--repo acme/measure --state-dir "$TDIR/state" -v
	echo "== rc $RC; stdout:"
	echo "$OUT"
	echo "== stderr (egret and the CLI):"
	echo "$ERR"
	echo "== requests:"
	"$EGRET" requests list --all --state-dir "$TDIR/state"
	echo "== what the task servers were asked (host method path status bytes-received):"
	awk '$1 == "host" { print $3, $4, $5, $6, $7 }' "$AG_LOG"
	: >"$AG_LOG"
}

TESTS=(
	t_agent_quiet_rule t_agent_claude_code_root t_agent_codex_root t_agent_gemini_cli_root
	t_agent_claude_code_egretd t_agent_codex_egretd t_agent_gemini_cli_egretd
	t_agent_codex_nested_sandbox t_agent_claude_feed_root t_agent_claude_feed_egretd
)

if [ "${1:-}" = --measure ]; then
	MEASURE=${2:-}
	TESTS=(t_measure)
	VERBOSE=1
	set --
fi

main() {
	local filter=${1:-} t problem c
	if [ ! -x "$EGRET" ] || [ ! -x "$HELPERS/probe" ]; then
		echo "run.sh: need EGRET and HELPERS; got EGRET='$EGRET' HELPERS='$HELPERS'" >&2
		TESTS_FAILED=1
		summary
		exit 1
	fi
	CG2=$(cgroup2_mount)
	problem=$(preflight_problem git node npm openssl python3)
	while read -r c _ v bin; do
		[ -n "$problem" ] || [ -x "$AGENTS_DIR/$c@$v/node_modules/.bin/$bin" ] ||
			problem="$c $v is not installed in $AGENTS_DIR (tools/install-deps.sh installs it)"
	done < <(grep -v '^#' "$HERE/versions")
	preflight_or_exit "$problem" "the agent CLI suite" "${#TESTS[@]}"
	if ! suite_cgroup_enter; then
		echo "FAIL  suite_cgroup_enter: could not make the suite's cgroup under $CG2"
		TESTS_FAILED=1
		summary
		exit 1
	fi
	if ! world_up || ! agents_world_up; then
		echo "FAIL  world_up: could not build the test world and the task's servers"
		suite_cgroup_leave
		TESTS_FAILED=1
		summary
		exit 1
	fi
	trap 'test_tidy >/dev/null 2>&1; agents_world_down; world_down; suite_gc >/dev/null 2>&1; suite_cgroup_leave' EXIT
	trap 'exit 130' INT TERM
	for t in "${TESTS[@]}"; do
		[ -n "$filter" ] && ! [[ $t =~ $filter ]] && continue
		run_test "$t"
	done
	summary
}

main "$@"
