#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""mockworld.py - the servers tests/agents runs in the test world.

    mockworld.py DIR LOG [tls:]ADDR:PORT...

Builds into DIR what the task needs, then serves it over HTTPS (and HTTP)
on every ADDR:PORT, choosing by the request's Host:

  api.anthropic.com                   the Anthropic Messages API (models.py)
  api.openai.com                      the OpenAI Responses API
  generativelanguage.googleapis.com   the Gemini API
  registry.npmjs.org                  an npm registry: egret-hello 1.0.0
  git.test                            git smart HTTP: /git/app.git, a
                                      package that depends on egret-hello
                                      and tests it with `npm test`
  api.mistral.ai                      GET /v1/models: another vendor's
                                      model API, which no policy of the
                                      suite allows (models.py's feed task)

DIR/tls/ca.pem is the CA the CLIs are given (NODE_EXTRA_CA_CERTS,
CODEX_CA_CERTIFICATE, GIT_SSL_CAINFO); the certificate names every host
above. Any other path gets 404. LOG gets tests/clients/server.py's lines
("conn", "sni", "tls", "req PEER METHOD PATH STATUS") and, per request,
"host PEER HOST METHOD PATH STATUS BYTES-RECEIVED": what each CLI asked of
which host, and how much it sent, and models.py's "model {json}" lines
(what the mock model received, what it decided). Prints "ready" once
every address is bound.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients"))
import fixtures  # noqa: E402  (tests/clients: the npm tarball, the CA)
import server  # noqa: E402     (tests/clients: the HTTP(S) server, git)
import models  # noqa: E402

API_HOSTS = ("api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com")
REGISTRY = "registry.npmjs.org"
FORGE = "git.test"
OTHER_API = "api.mistral.ai"    # in the world, never in a policy here
TLS_NAMES = API_HOSTS + (REGISTRY, FORGE, OTHER_API)
MODELS = json.dumps({"object": "list", "data": [
    {"id": "mistral-mock-latest", "object": "model", "owned_by": "mistralai"}]}).encode()

APP = {
    "package.json": json.dumps({
        "name": "app", "version": "1.0.0", "private": True,
        "scripts": {"test": "node test.js"},
        "dependencies": {"egret-hello": "^1.0.0"}}, indent=2) + "\n",
    "test.js": 'const m = require("egret-hello");\n'
               'if (m !== "egret-hello-npm") { console.error("wrong module: " + m); process.exit(1); }\n'
               'console.log("TEST-PASS " + m);\n',
    ".gitignore": "node_modules/\n",
}


def app_repo(root, work):
    """root/app.git: the repository the agent clones."""
    src = os.path.join(work, "app")
    env = dict(os.environ, GIT_AUTHOR_NAME="egret", GIT_AUTHOR_EMAIL="t@egret.invalid",
               GIT_COMMITTER_NAME="egret", GIT_COMMITTER_EMAIL="t@egret.invalid",
               HOME=work, GIT_CONFIG_NOSYSTEM="1")
    for name, text in APP.items():
        fixtures.write(os.path.join(src, name), text)
    for args in (["init", "-q", "-b", "main", src], ["-C", src, "add", "-A"],
                 ["-C", src, "commit", "-qm", "the app"],
                 ["clone", "-q", "--bare", src, os.path.join(root, "app.git")]):
        subprocess.run(["git"] + args, check=True, env=env, stdout=subprocess.DEVNULL)


def registry(www):
    """The packument of egret-hello, its tarball from fixtures.py."""
    fixtures.npm(www)
    with open(os.path.join(www, "npm", "egret-hello-1.0.0.tgz"), "rb") as f:
        tgz = f.read()
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tgz).digest()).decode()
    version = {"name": "egret-hello", "version": "1.0.0", "main": "index.js",
               "dist": {"tarball": "https://%s/egret-hello/-/egret-hello-1.0.0.tgz" % REGISTRY,
                        "integrity": integrity, "shasum": hashlib.sha1(tgz).hexdigest()}}
    doc = {"name": "egret-hello", "dist-tags": {"latest": "1.0.0"},
           "versions": {"1.0.0": version}}
    return {"/egret-hello": json.dumps(doc).encode(),
            "/egret-hello/-/egret-hello-1.0.0.tgz": tgz}


REGISTRY_FILES = {}
DUMP = os.environ.get("MOCKWORLD_DUMP")
DUMPS = __import__("itertools").count()


class Handler(server.Handler):
    protocol_version = "HTTP/1.1"   # keep-alive: the CLIs reuse connections

    def host(self):
        return (self.headers.get("Host") or "").split(":")[0].lower()

    def reply(self, status, ctype, data):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def note(self, status, received):
        server.log("host %s %s %s %s %s %d" % (self.client_address[0], self.host(),
                                               self.command, self.path, status, received))

    def do_GET(self):
        host, path = self.host(), self.path.split("?")[0]
        if host == FORGE and path.startswith("/git/"):
            self.note(200, 0)
            return self.git()
        if host == REGISTRY and path in REGISTRY_FILES:
            self.note(200, 0)
            ctype = "application/json" if path.count("/") == 1 else "application/octet-stream"
            return self.reply(200, ctype, REGISTRY_FILES[path])
        if host == OTHER_API and path == "/v1/models":
            self.note(200, 0)
            return self.reply(200, "application/json", MODELS)
        self.note(404, 0)
        self.reply(404, "application/json", b'{"error": {"message": "not found"}}')

    def do_POST(self):
        host, path = self.host(), self.path.split("?")[0]
        if host == FORGE and path.startswith("/git/"):
            self.note(200, int(self.headers.get("Content-Length") or 0))
            return self.git()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") == "gzip":
            import gzip
            raw = gzip.decompress(raw)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        if DUMP:
            # --measure: every request body, to read what a CLI sends
            with open(os.path.join(DUMP, "%s-%d.json" % (host, next(DUMPS))), "wb") as f:
                f.write(raw)
        status, ctype, data = 404, "application/json", b'{"error": {"message": "not found"}}'
        if host == "api.anthropic.com" and path == "/v1/messages":
            status, ctype, data = models.anthropic(body)
        elif host == "api.anthropic.com" and path == "/v1/messages/count_tokens":
            status, ctype, data = 200, "application/json", b'{"input_tokens": 100}'
        elif host == "api.anthropic.com" and path == "/api/event_logging/v2/batch":
            # Claude Code's telemetry, taken as the real service takes it
            # (a refusal makes it send each batch again).
            status, ctype, data = 200, "application/json", b"{}"
        elif host == "api.openai.com" and path == "/v1/responses":
            status, ctype, data = models.openai(body)
        elif host == "generativelanguage.googleapis.com" and ":" in path:
            status, ctype, data = models.gemini(body, path.rsplit(":", 1)[1])
        self.note(status, length)
        self.reply(status, ctype, data)


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: mockworld.py DIR LOG [tls:]ADDR:PORT...")
    top, log, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    www, root, work = (os.path.join(top, d) for d in ("www", "git", "work"))
    os.makedirs(root, exist_ok=True)
    app_repo(root, work)
    REGISTRY_FILES.update(registry(www))
    fixtures.TLS_NAMES = TLS_NAMES
    fixtures.tls(top, work)
    # tests/clients/server.py serves, with this Handler in place of its own.
    server.Handler = Handler
    models.LOG = server.log
    sys.argv = ["server.py", log, www, root, "--tls", os.path.join(top, "tls", "server.pem"),
                os.path.join(top, "tls", "server.key")] + specs
    server.main()


if __name__ == "__main__":
    main()
