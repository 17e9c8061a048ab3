# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""models.py - mock model APIs for tests/agents: the wire protocols the real
agent CLIs speak, and the one task every mock drives them through.

    Anthropic Messages API (Claude Code)   POST /v1/messages, SSE when stream
    OpenAI Responses API (Codex)           POST /v1/responses, SSE
    Gemini API (gemini-cli)                POST /v1beta/models/M:streamGenerateContent
                                           (?alt=sse), :generateContent, :countTokens

The task is the CLI's own shell tool run four times (TASK_STEPS): clone a
repository over HTTPS, `npm install`, `npm test`, commit. The prompt names
the directory and the remote ("egret-task dir=D remote=R"). Each turn the
mock counts the tool results the conversation holds and asks for the next
step; each step prints STEP-OK-N on success, and the last answer is text,
"TASK DONE" when every step's output had its marker, else "TASK FAILED"
with the output that lacked it. A request that carries no shell tool (a
title, a topic, a quota check, a classifier) gets a short answer of its
kind. Nothing here knows egret: the test judges what egret saw.

A second task, for Claude Code only (FEED_RE: "egret-feed-task api=HOST"),
is issue 43's: reach another vendor's model API that the policy does not
allow, and follow the instruction line of docs/AGENTS.md if the system
prompt carries it (feed_turn below). It decides on what its tool results
actually hold, and LOG (set by mockworld.py) gets a "model {json}" line per
turn with what it received and what it decided.
"""
import json
import re

TASK_RE = re.compile(r"egret-task dir=(\S+) remote=(\S+)")
FEED_RE = re.compile(r"egret-feed-task api=([A-Za-z0-9.-]+)")
LOG = None     # mockworld.py: server.log, to say what the model received


def task_steps(d, remote):
    git = "git -c user.name=agent -c user.email=agent@example.invalid"
    return [
        "cd %s && git clone -q %s app && echo STEP-OK-1" % (d, remote),
        "cd %s/app && npm install --no-audit --no-fund && echo STEP-OK-2" % d,
        "cd %s/app && npm test && echo STEP-OK-3" % d,
        "cd %s/app && git add -A && %s commit -qm 'npm install: the lockfile' && "
        "git log --oneline -1 && echo STEP-OK-4" % (d, git),
    ]


def next_step(text_of_task, results):
    """(command, None) for the next step, or (None, final text)."""
    m = TASK_RE.search(text_of_task or "")
    if not m:
        return None, "ok"
    steps = task_steps(m.group(1), m.group(2))
    for i, out in enumerate(results):
        if i < len(steps) and "STEP-OK-%d" % (i + 1) not in out:
            return None, "TASK FAILED at step %d: %s" % (i + 1, out[-2000:])
    if len(results) < len(steps):
        return steps[len(results)], None
    return None, "TASK DONE"


def flatten(content):
    """Text of a content value: a string, or a list of blocks/parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(flatten(c.get("text") or c.get("content") or c.get("output") or "")
                         if isinstance(c, dict) else str(c) for c in content)
    if isinstance(content, dict):
        return flatten(content.get("text") or content.get("content") or content.get("output")
                       or json.dumps(content))
    return "" if content is None else str(content)


def sse(events):
    """[(event name or None, object)] as a text/event-stream body."""
    out = []
    for name, obj in events:
        if name:
            out.append("event: %s\n" % name)
        out.append("data: %s\n\n" % json.dumps(obj))
    return "".join(out).encode()


# --- the denial-feed task (Claude Code, issue 43) ----------------------------

FEED_TRIES = 5      # calls of the refused API before the model gives up


def feed_commands(host):
    """The feed task's tool calls, by what each is for: (command, description)."""
    return {
        "limits": ('cat "$EGRET_LIMITS"', "read the limits manifest"),
        "call": ("curl -sS --max-time 10 https://%s/v1/models" % host,
                 "list the models of %s" % host),
        "feed": ('tail -n 20 "$EGRET_DENIALS"', "read the denial feed"),
    }


def feed_refusal(host, text):
    """The line of TEXT (a feed's tail, as the tool returned it) refusing
    HOST: a JSON object with "verdict":"deny" and "name":HOST, or None."""
    for line in text.splitlines():
        if "{" not in line:
            continue
        try:
            obj = json.loads(line[line.index("{"):])
        except ValueError:
            continue
        if isinstance(obj, dict) and obj.get("verdict") == "deny" and obj.get("name") == host:
            return obj
    return None


def feed_answer(host, line, calls):
    return ("REFUSED %s after %d call%s. egret's denial feed ($EGRET_DENIALS) has it: "
            "kind %s, verdict %s, reason %s; why: \"%s\"; hint: \"%s\". "
            "Retrying will not help, so I stopped. To finish this task I need %s:443 "
            "(its model API, GET /v1/models): please ask the operator to allow it."
            % (host, calls, "" if calls == 1 else "s", line.get("kind"), line.get("verdict"),
               line.get("reason"), line.get("why"), line.get("hint"), host))


def feed_turn(host, system, steps):
    """The feed task's next move: ("Bash", (command, description)) or
    (None, the final answer). STEPS: [(command, output, is_error)] of the
    tool calls so far. The model follows docs/AGENTS.md's instruction line
    only if the system prompt carries it (it names $EGRET_LIMITS and
    $EGRET_DENIALS): read the manifest first; after a failed call read the
    feed, and stop only if the feed's text names HOST as refused. Otherwise
    it calls again, FEED_TRIES times in all, and answers FAILED."""
    cmds = feed_commands(host)
    calls = [s for s in steps if s[0] == cmds["call"][0]]
    if "EGRET_LIMITS" in system and not steps:
        return "Bash", cmds["limits"]
    if calls and steps[-1] is calls[-1] and not calls[-1][2]:
        return None, "REACHED %s: %s" % (host, calls[-1][1][-500:])
    if calls and steps[-1] is calls[-1] and "EGRET_DENIALS" in system:
        return "Bash", cmds["feed"]
    if steps and steps[-1][0] == cmds["feed"][0]:
        line = feed_refusal(host, steps[-1][1])
        if line:
            return None, feed_answer(host, line, len(calls))
    if len(calls) < FEED_TRIES:
        return "Bash", cmds["call"]
    return None, "FAILED: %s did not answer after %d calls; the last said: %s" % (
        host, len(calls), calls[-1][1][-500:])


def note(obj):
    if LOG:
        LOG("model " + json.dumps(obj, sort_keys=True))


# --- Anthropic Messages API --------------------------------------------------

def anthropic_conversation(body):
    """(task text, system text, [(command, output, is_error)] of the tool
    calls) of a Messages API request."""
    task, uses, steps = "", {}, []
    for msg in body.get("messages") or []:
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                uses[b.get("id")] = (b.get("input") or {}).get("command", "")
            elif b.get("type") == "tool_result":
                steps.append((uses.get(b.get("tool_use_id"), ""), flatten(b.get("content")),
                              bool(b.get("is_error"))))
            elif b.get("type") == "text" and msg.get("role") == "user" and not task:
                if TASK_RE.search(b.get("text") or "") or FEED_RE.search(b.get("text") or ""):
                    task = b["text"]
    return task, flatten(body.get("system")), steps


def anthropic_turn(body):
    """("Bash", (command, description)) or (None, text): the next move."""
    if "Bash" not in [t.get("name") for t in body.get("tools") or []]:
        return None, "ok"
    task, system, steps = anthropic_conversation(body)
    feed = FEED_RE.search(task)
    if not feed:
        cmd, text = next_step(task, [out for _, out, _ in steps])
        return ("Bash", (cmd, "task step")) if cmd else (None, text)
    tool, what = feed_turn(feed.group(1), system, steps)
    note({"task": "feed", "api": feed.group(1),
          "instructed": {"limits": "EGRET_LIMITS" in system, "denials": "EGRET_DENIALS" in system},
          "received": dict(zip(("command", "output", "is_error"), steps[-1])) if steps else None,
          "decided": {"tool": tool, "command": what[0]} if tool else {"answer": what}})
    return tool, what


def anthropic(body):
    """(status, content type, bytes) for POST /v1/messages."""
    tool, what = anthropic_turn(body)
    n = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
    if tool:
        inp = {"command": what[0], "description": what[1]}
        block = {"type": "tool_use", "id": "toolu_%d" % n, "name": tool, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(inp)}
        full = dict(block, input=inp)
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": what}
        full = {"type": "text", "text": what}
        stop = "end_turn"
    usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    msg = {"id": "msg_%d" % n, "type": "message", "role": "assistant",
           "model": body.get("model", "mock"), "content": [], "stop_reason": None,
           "stop_sequence": None, "usage": usage}
    if not body.get("stream"):
        msg.update(content=[full], stop_reason=stop)
        return 200, "application/json", json.dumps(msg).encode()
    return 200, "text/event-stream", sse([
        ("message_start", {"type": "message_start", "message": msg}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 20}}),
        ("message_stop", {"type": "message_stop"}),
    ])


# --- OpenAI Responses API ----------------------------------------------------

# Codex's shell tools, by name: how each takes a command line.
OPENAI_SHELLS = {
    "shell_command": lambda c: {"command": c},
    "exec_command": lambda c: {"cmd": c},
    "shell": lambda c: {"command": ["bash", "-lc", c]},
}

# Codex's "code mode" (its default model's): one custom tool, `exec`, that
# runs JavaScript calling the nested tools; a command still running after
# a yield is polled with write_stdin until it exits.
CODE_MODE = """// @exec: {"yield_time_ms": 30000}
let r = await tools.exec_command({cmd: %s, yield_time_ms: 30000});
let out = r.output || "";
while (r.session_id !== undefined && r.exit_code === undefined) {
  r = await tools.write_stdin({session_id: r.session_id, chars: "", yield_time_ms: 30000});
  out += r.output || "";
}
text(out);
"""


def tool_names(obj, out):
    """Every tool name in a request (Codex nests them in namespaces)."""
    if isinstance(obj, dict):
        if obj.get("type") in ("function", "custom") and obj.get("name"):
            out.add(obj["name"])
        for v in obj.values():
            tool_names(v, out)
    elif isinstance(obj, list):
        for v in obj:
            tool_names(v, out)
    return out


def openai(body):
    """(status, content type, bytes) for POST /v1/responses."""
    tools = tool_names([body.get("tools"), body.get("input")], set())
    shell = "exec" if "exec" in tools else next((n for n in OPENAI_SHELLS if n in tools), None)
    task, results = "", []
    items = body.get("input")
    for it in items if isinstance(items, list) else [{"role": "user", "content": items}]:
        if it.get("type") in ("function_call_output", "custom_tool_call_output"):
            results.append(flatten(it.get("output")))
        elif it.get("role") == "user" and not task and TASK_RE.search(flatten(it.get("content"))):
            task = flatten(it.get("content"))
    cmd, text = next_step(task, results) if shell else (None, "ok")
    n = len(results)
    if cmd and shell == "exec":
        item = {"type": "custom_tool_call", "id": "ctc_%d" % n, "call_id": "call_%d" % n,
                "name": "exec", "input": CODE_MODE % json.dumps(cmd), "status": "completed"}
    elif cmd:
        item = {"type": "function_call", "id": "fc_%d" % n, "call_id": "call_%d" % n,
                "name": shell, "arguments": json.dumps(OPENAI_SHELLS[shell](cmd)),
                "status": "completed"}
    else:
        item = {"type": "message", "id": "msg_%d" % n, "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 120}
    resp = {"id": "resp_%d" % n, "object": "response", "status": "completed",
            "model": body.get("model", "mock"), "output": [item], "usage": usage}
    events = [("response.created", {"type": "response.created",
                                    "response": dict(resp, status="in_progress", output=[])}),
              ("response.output_item.added", {"type": "response.output_item.added",
                                              "output_index": 0, "item": item})]
    if not cmd:
        events.append(("response.output_text.delta", {
            "type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
            "content_index": 0, "delta": text}))
    events += [("response.output_item.done", {"type": "response.output_item.done",
                                              "output_index": 0, "item": item}),
               ("response.completed", {"type": "response.completed", "response": resp})]
    if not body.get("stream", True):
        return 200, "application/json", json.dumps(resp).encode()
    return 200, "text/event-stream", sse(events)


# --- Gemini API --------------------------------------------------------------

def gemini_json(body):
    """An answer for a structured request (responseMimeType JSON): gemini-cli's
    next-speaker check, its model router, its loop detector."""
    cfg = body.get("generationConfig") or {}
    schema = cfg.get("responseJsonSchema") or cfg.get("responseSchema") or {}
    props = schema.get("properties") or {}
    out = {}
    for name, spec in props.items():
        if name == "next_speaker":
            out[name] = "user"
        elif name == "model_choice":
            out[name] = "flash"
        elif (spec or {}).get("type") in ("boolean", "BOOLEAN"):
            out[name] = False
        elif (spec or {}).get("type") in ("number", "NUMBER", "integer", "INTEGER"):
            out[name] = (spec or {}).get("minimum", 1)
        else:
            out[name] = "mock"
    return json.dumps(out)


def gemini(body, method):
    """(status, content type, bytes) for POST /v1beta/models/M:METHOD."""
    if method == "countTokens":
        return 200, "application/json", b'{"totalTokens": 100}'
    decls = [f.get("name") for t in body.get("tools") or []
             for f in t.get("functionDeclarations") or []]
    task, results = "", []
    for c in body.get("contents") or []:
        for p in c.get("parts") or []:
            if "functionResponse" in p:
                results.append(flatten((p["functionResponse"].get("response") or {})))
            elif c.get("role") == "user" and not task and TASK_RE.search(p.get("text") or ""):
                task = p["text"]
    cfg = body.get("generationConfig") or {}
    if "application/json" in (cfg.get("responseMimeType") or ""):
        parts = [{"text": gemini_json(body)}]
    else:
        cmd, text = next_step(task, results) if "run_shell_command" in decls else (None, "ok")
        parts = [{"functionCall": {"name": "run_shell_command",
                                   "args": {"command": cmd, "description": "task step"}}}
                 ] if cmd else [{"text": text}]
    resp = {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20,
                              "totalTokenCount": 120},
            "modelVersion": "mock"}
    if method == "streamGenerateContent":
        return 200, "text/event-stream", sse([(None, resp)])
    return 200, "application/json", json.dumps(resp).encode()
