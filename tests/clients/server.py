#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""server.py - the real-client suite's HTTP and HTTPS server, run in the test world.

    server.py LOG DOCROOT GITROOT [--tls CERT KEY] [tls:]ADDR:PORT...

Serves DOCROOT as static files (the PEP 503 index, the npm tarball, the apt
repository, plain files), /git/... through `git http-backend` (smart
HTTP) for the bare repositories under GITROOT, and takes uploads (PUT or
POST to /upload/NAME: a counted or chunked body, after a 100 Continue when
the request expects one; nothing is kept), over plain HTTP on each
ADDR:PORT and over TLS (CERT and KEY, PEM) on each tls:ADDR:PORT. Every
accepted connection ("conn PEER LOCAL") and every request ("req PEER METHOD
PATH STATUS") is one line in LOG: the proof of what reached the world, or
that nothing did. A TLS connection adds, between the two, the name its
ClientHello asked for ("sni PEER NAME", NAME "-" with no SNI) and the
handshake's outcome ("tls PEER VERSION", or "tls-error PEER REASON"). An
upload adds "upload PEER METHOD PATH BYTES SHA256 FRAMING EXPECT" (FRAMING
counted or chunked, EXPECT 100-continue or -) and answers "ok BYTES
SHA256": what the server itself read.
Prints "ready" on stdout once every address is bound.
"""
import hashlib
import http.server
import os
import socket
import ssl
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
        if self.path.startswith("/upload/"):
            return self.upload()
        self.send_error(405)

    def do_PUT(self):
        if self.path.startswith("/upload/"):
            return self.upload()
        self.send_error(405)

    def chunks(self):
        """A chunked body's data (RFC 9112, 7.1), its trailers skipped."""
        while True:
            size = int(self.rfile.readline(65538).split(b";")[0], 16)
            if size == 0:
                break
            yield self.rfile.read(size)
            if self.rfile.readline(3) != b"\r\n":
                raise ValueError("no CRLF after a chunk")
        while self.rfile.readline(65538) not in (b"\r\n", b""):
            pass

    def counted(self, left):
        while left > 0:
            data = self.rfile.read(min(left, 1 << 16))
            if not data:
                break
            left -= len(data)
            yield data

    def upload(self):
        expect = (self.headers.get("Expect") or "-").lower()
        if expect == "100-continue":
            # What a server that reads the body says first (this one
            # answers HTTP/1.0, but the client asked in 1.1).
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.wfile.flush()
        chunked = self.headers.get("Transfer-Encoding") == "chunked"
        digest, size = hashlib.sha256(), 0
        body = self.chunks() if chunked else \
            self.counted(int(self.headers.get("Content-Length") or 0))
        for data in body:
            digest.update(data)
            size += len(data)
        log("upload %s %s %s %d %s %s %s" % (
            self.client_address[0], self.command, self.path, size,
            digest.hexdigest(), "chunked" if chunked else "counted", expect))
        answer = ("ok %d %s\n" % (size, digest.hexdigest())).encode()
        self.send_response(201)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

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
        # git gzips a large request (many wants): http-backend inflates it.
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             stdout=subprocess.PIPE, check=False).stdout
        # The CGI head ends at the first blank line, "\r\n\r\n" or
        # "\n\n", whichever comes first: a packfile may hold either.
        ends = [(i, len(sep)) for sep in (b"\r\n\r\n", b"\n\n")
                for i in [out.find(sep)] if i >= 0]
        at, n = min(ends) if ends else (len(out), 0)
        head, payload = out[:at], out[at + n:]
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

    def __init__(self, addr, family, tls=None):
        self.address_family = family
        self.tls = tls
        super().__init__(addr, Handler)

    def get_request(self):
        sock, peer = super().get_request()
        if self.tls:
            # The handshake happens in the connection's own thread.
            sock = self.tls.wrap_socket(sock, server_side=True,
                                        do_handshake_on_connect=False)
        return sock, peer

    def verify_request(self, request, client_address):
        log("conn %s %s" % (client_address[0], request.getsockname()[0]))
        return True

    def finish_request(self, request, client_address):
        if self.tls:
            try:
                request.do_handshake()
            except (OSError, ValueError) as e:
                log("tls-error %s %s" % (client_address[0],
                                         str(e).replace("\n", " ")))
                return
            log("tls %s %s" % (client_address[0], request.version()))
        super().finish_request(request, client_address)

    def shutdown_request(self, request):
        if isinstance(request, ssl.SSLSocket) and request.version():
            try:
                # Send close_notify, without waiting for the peer's.
                request.setblocking(False)
                request.unwrap().close()
            except (OSError, ValueError):
                pass
        super().shutdown_request(request)


def tls_context(cert, key):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["http/1.1"])

    def sni(sock, name, _ctx):
        try:
            peer = sock.getpeername()[0]
        except OSError:
            peer = "?"
        log("sni %s %s" % (peer, name or "-"))

    ctx.sni_callback = sni
    return ctx


def main():
    global LOG, GITROOT
    usage = "usage: server.py LOG DOCROOT GITROOT [--tls CERT KEY] [tls:]ADDR:PORT..."
    args = sys.argv[1:]
    if len(args) < 4:
        sys.exit(usage)
    LOG = open(args[0], "a", encoding="utf-8")
    docroot, GITROOT = args[1], args[2]
    specs, tls = args[3:], None
    if specs[0] == "--tls":
        if len(specs) < 4:
            sys.exit(usage)
        tls, specs = tls_context(specs[1], specs[2]), specs[3:]
    os.chdir(docroot)
    servers = []
    for spec in specs:
        secure = spec.startswith("tls:")
        if secure and not tls:
            sys.exit("server.py: %s needs --tls CERT KEY" % spec)
        host, _, port = spec[4 if secure else 0:].rpartition(":")
        family = socket.AF_INET6 if host.startswith("[") else socket.AF_INET
        servers.append(Server((host.strip("[]"), int(port)), family,
                              tls if secure else None))
    for srv in servers:
        threading.Thread(target=srv.serve_forever, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
