# transcript.jq - a `claude -p --output-format stream-json --verbose` run
# as readable Markdown: the start, the appended system prompt and the
# prompt (given: --arg system, --arg prompt), each tool call with its
# result, the final answer. Read with jq -rs (the whole stream at once);
# tests/agents/run.sh writes it for AG_TRANSCRIPT (README.md).
def fence(t): "```\n" + (t | rtrimstr("\n")) + "\n```";
def quote(t): t | split("\n") | map("> " + .) | join("\n");
def text(c): if (c | type) == "array" then c | map(.text? // "") | join("\n") else c // "" end;
(map(select(.type == "system" and .subtype == "init"))[0]) as $init
| (map(select(.type == "user") | .message.content[]? | select(.type == "tool_result")
      | {key: .tool_use_id, value: .}) | from_entries) as $results
| (map(select(.type == "result"))[-1]) as $last
| [ "Claude Code \($init.claude_code_version), model `\($init.model)` (the mock),"
    + " permission mode `\($init.permissionMode)`.",
    "",
    "**System prompt, appended** (`--append-system-prompt`):",
    "",
    (if $system == "" then "(none)" else quote($system) end),
    "",
    "**Prompt** (`-p`):",
    "",
    quote($prompt),
    "",
    ( [.[] | select(.type == "assistant") | .message.content[]? | select(.type == "tool_use")]
      | to_entries[]
      | .key as $i | .value as $u | $results[$u.id] as $r
      | "**Tool call \($i + 1)**: \($u.name), \"\($u.input.description // "")\"",
        "",
        "```sh", $u.input.command, "```",
        "",
        "Result\(if $r.is_error then " (an error)" else "" end):",
        "",
        fence(text($r.content)),
        ""),
    "**Final answer** (\($last.subtype), \($last.num_turns) turns):",
    "",
    quote($last.result)
  ] | join("\n")
