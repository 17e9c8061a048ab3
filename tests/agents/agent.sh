#!/bin/sh
# agent.sh CLI PROMPT [SYSTEM] - COMMAND of a tests/agents attempt: one
# agent CLI, non-interactive, its tool use approved in advance, on the
# task PROMPT names (tests/agents/models.py). Run as the attempt's user,
# in its HOME; the environment (API key, the test CA) comes from `egret
# run --setenv`.
#
#   claude-code  claude -p PROMPT --dangerously-skip-permissions
#                (every tool allowed without asking; -p prints the answer)
#   claude-code-feed  the same, SYSTEM (docs/AGENTS.md's instruction line)
#                added to its system prompt with --append-system-prompt when
#                given, and its whole transcript printed as JSON lines
#                (--output-format stream-json --verbose)
#   codex        codex exec --dangerously-bypass-approvals-and-sandbox
#                --skip-git-repo-check PROMPT (no approvals, no sandbox of
#                its own: egret's is the one)
#   codex-sandboxed  codex exec --sandbox workspace-write, its network on:
#                Codex's own sandbox (bubblewrap) inside the attempt, which
#                needs egret run --nested-sandbox
#   gemini-cli   gemini -p PROMPT --yolo --skip-trust (every tool call
#                approved; the start directory trusted for this run)
set -e
here=$(dirname "$0")
cli=$1
prompt=$2
system=${3:-}
base=${cli%-sandboxed}
read -r name _ version cmd <<EOF
$(grep "^${base%-feed} " "$here/versions")
EOF
bin=${AGENTS_DIR:-/opt/egret-agents}/$name@$version/node_modules/.bin/$cmd
case $cli in
claude-code)
	exec "$bin" -p "$prompt" --dangerously-skip-permissions
	;;
claude-code-feed)
	exec "$bin" -p "$prompt" ${system:+--append-system-prompt "$system"} \
		--dangerously-skip-permissions --output-format stream-json --verbose
	;;
codex)
	# An API key login: Codex reads OPENAI_API_KEY for `exec`.
	exec "$bin" exec --dangerously-bypass-approvals-and-sandbox --skip-git-repo-check \
		"$prompt"
	;;
codex-sandboxed)
	exec "$bin" exec --sandbox workspace-write -c sandbox_workspace_write.network_access=true \
		--skip-git-repo-check "$prompt"
	;;
gemini-cli)
	exec "$bin" -p "$prompt" --yolo --skip-trust
	;;
esac
echo "agent.sh: unknown CLI $cli" >&2
exit 2
