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
"""
import json
import re

TASK_RE = re.compile(r"egret-task dir=(\S+) remote=(\S+)")


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


# --- Anthropic Messages API --------------------------------------------------

def anthropic(body):
    """(status, content type, bytes) for POST /v1/messages."""
    tools = [t.get("name") for t in body.get("tools") or []]
    task, results = "", []
    for msg in body.get("messages") or []:
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for b in blocks:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_result":
                results.append(flatten(b.get("content")))
            elif b.get("type") == "text" and msg.get("role") == "user" and not task:
                if TASK_RE.search(b.get("text") or ""):
                    task = b["text"]
    cmd, text = next_step(task, results) if "Bash" in tools else (None, "ok")
    if cmd:
        block = {"type": "tool_use", "id": "toolu_%d" % len(results), "name": "Bash",
                 "input": {}}
        delta = {"type": "input_json_delta",
                 "partial_json": json.dumps({"command": cmd, "description": "task step"})}
        full = dict(block, input={"command": cmd, "description": "task step"})
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": text}
        full = {"type": "text", "text": text}
        stop = "end_turn"
    usage = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    msg = {"id": "msg_%d" % len(results), "type": "message", "role": "assistant",
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
