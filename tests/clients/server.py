#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""server.py - the real-client suite's HTTP server, run in the test world.

    server.py LOG DOCROOT GITROOT ADDR:PORT...

Serves DOCROOT as static files (the PEP 503 index, the npm tarball, the apt
repository, plain files) and /git/... through `git http-backend` (smart
HTTP) for the bare repositories under GITROOT. Every accepted connection
("conn PEER LOCAL") and every request ("req PEER METHOD PATH STATUS") is
one line in LOG: the proof of what reached the world, or that nothing did.
Prints "ready" on stdout once every address is bound.
"""
import http.server
import os
import socket
import subprocess
import sys
import threading

LOG_LOCK = threading.Lock()
LOG = None
GITROOT = None


def log(line):
    with LOG_LOCK:
        LOG.write(line + "\n")
        LOG.flush()


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):
        pass  # our own log only

    def log_request(self, code="-", size="-"):
        log("req %s %s %s %s" % (self.client_address[0], self.command,
                                  self.path, code))

    def do_GET(self):
        if self.path.startswith("/git/"):
            return self.git()
        return super().do_GET()

    def do_POST(self):
        if self.path.startswith("/git/"):
            return self.git()
        self.send_error(405)

    def git(self):
        path, _, query = self.path[len("/git"):].partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": GITROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type") or "",
            "CONTENT_LENGTH": str(length),
            "REMOTE_ADDR": self.client_address[0],
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.0",
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             stdout=subprocess.PIPE, check=False).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, addr, family):
        self.address_family = family
        super().__init__(addr, Handler)

    def verify_request(self, request, client_address):
        log("conn %s %s" % (client_address[0], request.getsockname()[0]))
        return True


def main():
    global LOG, GITROOT
    if len(sys.argv) < 5:
        sys.exit("usage: server.py LOG DOCROOT GITROOT ADDR:PORT...")
    LOG = open(sys.argv[1], "a", encoding="utf-8")
    docroot, GITROOT = sys.argv[2], sys.argv[3]
    os.chdir(docroot)
    servers = []
    for spec in sys.argv[4:]:
        host, _, port = spec.rpartition(":")
        family = socket.AF_INET6 if host.startswith("[") else socket.AF_INET
        servers.append(Server((host.strip("[]"), int(port)), family))
    for srv in servers:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
