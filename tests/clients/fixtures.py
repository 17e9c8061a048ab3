#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""fixtures.py - build what the real-client suite's servers serve.

    fixtures.py DIR

DIR/www   static files: files/hello.txt; a PEP 503 index (simple/) with a
          wheel built here (wheels/); an npm tarball (npm/); a Go module
          proxy (goproxy/: egret.test/hello v1.0.0); a flat apt repository
          (debian/: a .deb, Packages, Release)
DIR/git   hello.git, a bare repository for git http-backend and git daemon;
          push.git, the same, taking pushes over git://
DIR/tls   a throwaway CA (ca.pem, world-readable: the clients trust it) and
          the HTTPS server's certificate for pkgs.test and git.test
          (server.pem; server.key readable by root only); made with openssl,
          valid for two days; the CA's key is deleted once it has signed

Each artefact carries a marker of its own (egret-hello-...), so a test
that finds the marker knows the real bytes came through.
"""
import base64
import gzip
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import zipfile

MARK = "egret-hello"


def write(path, data, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.chmod(path, mode)


def wheel(www):
    name = "egret_hello-1.0-py3-none-any.whl"
    files = {
        "egret_hello/__init__.py": 'MARK = "%s-wheel"\n' % MARK,
        "egret_hello-1.0.dist-info/METADATA":
            "Metadata-Version: 2.1\nName: egret-hello\nVersion: 1.0\n"
            "Summary: egret's real-client suite\n",
        "egret_hello-1.0.dist-info/WHEEL":
            "Wheel-Version: 1.0\nGenerator: egret-fixtures\n"
            "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest())
        record.append("%s,sha256=%s,%d" % (path, digest.rstrip(b"=").decode(),
                                           len(text.encode())))
    record.append("egret_hello-1.0.dist-info/RECORD,,")
    files["egret_hello-1.0.dist-info/RECORD"] = "\n".join(record) + "\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path, text in files.items():
            z.writestr(path, text)
    data = buf.getvalue()
    write(os.path.join(www, "wheels", name), data)
    sha = hashlib.sha256(data).hexdigest()
    write(os.path.join(www, "simple", "index.html"),
          '<!DOCTYPE html><html><body>'
          '<a href="egret-hello/">egret-hello</a></body></html>\n')
    write(os.path.join(www, "simple", "egret-hello", "index.html"),
          '<!DOCTYPE html><html><body><a href="../../wheels/%s#sha256=%s">%s</a>'
          '</body></html>\n' % (name, sha, name))


def npm(www):
    files = {
        "package/package.json":
            '{"name": "egret-hello", "version": "1.0.0", "main": "index.js"}\n',
        "package/index.js": 'module.exports = "%s-npm";\n' % MARK,
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, 1700000000
            t.addfile(info, io.BytesIO(data))
    write(os.path.join(www, "npm", "egret-hello-1.0.0.tgz"), buf.getvalue())


def goproxy(www):
    """A GOPROXY (goproxy/) serving module egret.test/hello v1.0.0."""
    mod, ver = "egret.test/hello", "v1.0.0"
    top = os.path.join(www, "goproxy", mod, "@v")
    gomod = "module %s\n\ngo 1.19\n" % mod
    src = 'package hello\n\nconst Mark = "%s-go"\n' % MARK
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in (("go.mod", gomod), ("hello.go", src)):
            info = zipfile.ZipInfo("%s@%s/%s" % (mod, ver, name), (2023, 11, 14, 0, 0, 0))
            z.writestr(info, text)
    write(os.path.join(top, "list"), ver + "\n")
    write(os.path.join(top, ver + ".info"), '{"Version":"%s","Time":"2023-11-14T00:00:00Z"}\n' % ver)
    write(os.path.join(top, ver + ".mod"), gomod)
    write(os.path.join(top, ver + ".zip"), buf.getvalue())


def apt(www, work):
    stage = os.path.join(work, "deb")
    write(os.path.join(stage, "DEBIAN", "control"),
          "Package: egret-hello\nVersion: 1.0\nArchitecture: all\n"
          "Maintainer: egret tests <tests@egret.invalid>\n"
          "Description: egret's real-client suite\n")
    write(os.path.join(stage, "usr", "share", "egret-hello", "hello.txt"),
          "%s-deb\n" % MARK)
    repo = os.path.join(www, "debian")
    os.makedirs(repo, exist_ok=True)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", stage,
                    os.path.join(repo, "egret-hello_1.0_all.deb")],
                   check=True, stdout=subprocess.DEVNULL)
    packages = subprocess.run(["dpkg-scanpackages", "--multiversion", ".", "/dev/null"],
                              cwd=repo, check=True, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL).stdout
    write(os.path.join(repo, "Packages"), packages)
    write(os.path.join(repo, "Packages.gz"), gzip.compress(packages, mtime=0))
    lines = ["Origin: egret-tests", "Label: egret-tests", "Suite: tests",
             "Codename: tests", "Date: Thu, 01 Jan 2026 00:00:00 UTC",
             "Architectures: all amd64", "SHA256:"]
    for name in ("Packages", "Packages.gz"):
        with open(os.path.join(repo, name), "rb") as f:
            data = f.read()
        lines.append(" %s %d %s" % (hashlib.sha256(data).hexdigest(), len(data), name))
    write(os.path.join(repo, "Release"), "\n".join(lines) + "\n")


def git(root, work):
    src = os.path.join(work, "src")
    env = dict(os.environ, GIT_AUTHOR_NAME="egret", GIT_AUTHOR_EMAIL="t@egret.invalid",
               GIT_COMMITTER_NAME="egret", GIT_COMMITTER_EMAIL="t@egret.invalid",
               GIT_AUTHOR_DATE="1700000000 +0000", GIT_COMMITTER_DATE="1700000000 +0000",
               HOME=work, GIT_CONFIG_NOSYSTEM="1")
    run = lambda *a, **k: subprocess.run(a, check=True, env=env, stdout=subprocess.DEVNULL, **k)
    run("git", "init", "-q", "-b", "main", src)
    write(os.path.join(src, "README"), "%s-git\n" % MARK)
    run("git", "-C", src, "add", "README")
    run("git", "-C", src, "commit", "-q", "-m", "hello")
    bare = os.path.join(root, "hello.git")
    run("git", "clone", "-q", "--bare", src, bare)
    write(os.path.join(bare, "git-daemon-export-ok"), "")
    # A copy git daemon takes pushes into (the upload budget test).
    push = os.path.join(root, "push.git")
    run("git", "clone", "-q", "--bare", src, push)
    write(os.path.join(push, "git-daemon-export-ok"), "")
    run("git", "-C", push, "config", "daemon.receivepack", "true")


# openssl's configuration for both certificates: nothing read from the
# system's openssl.cnf, so the extensions are exactly these.
OPENSSL_CNF = """\
[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = %s
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
"""
TLS_NAMES = ("pkgs.test", "git.test")


def tls(top, work):
    out = os.path.join(top, "tls")
    os.makedirs(out, exist_ok=True)
    os.chmod(out, 0o755)
    cnf = os.path.join(work, "openssl.cnf")
    write(cnf, OPENSSL_CNF % ", ".join("DNS:" + n for n in TLS_NAMES))
    ca_key, ca = os.path.join(work, "ca.key"), os.path.join(out, "ca.pem")
    key, csr = os.path.join(out, "server.key"), os.path.join(work, "server.csr")
    crt = os.path.join(out, "server.pem")
    newkey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]

    def run(*args):     # quiet (key generation draws dots), but not on failure
        done = subprocess.run(("openssl",) + args, check=False, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if done.returncode:
            sys.exit("fixtures.py: openssl %s failed:\n%s" % (args[0], done.stdout))

    umask = os.umask(0o077)     # the keys: root's only
    run("req", "-x509", "-config", cnf, "-extensions", "ca", *newkey,
        "-keyout", ca_key, "-out", ca, "-days", "2", "-subj", "/CN=egret clients test CA")
    run("req", "-new", "-config", cnf, *newkey, "-keyout", key, "-out", csr,
        "-subj", "/CN=%s" % TLS_NAMES[0])
    run("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-set_serial", "1",
        "-days", "2", "-extfile", cnf, "-extensions", "server", "-out", crt)
    os.umask(umask)
    os.unlink(ca_key)   # nothing else can be signed with it
    os.chmod(ca, 0o644)
    os.chmod(crt, 0o644)
    os.chmod(key, 0o600)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: fixtures.py DIR")
    top = sys.argv[1]
    www, root, work = (os.path.join(top, d) for d in ("www", "git", "work"))
    write(os.path.join(www, "files", "hello.txt"), "%s-file\n" % MARK)
    wheel(www)
    npm(www)
    goproxy(www)
    apt(www, work)
    git(root, work)
    tls(top, work)


if __name__ == "__main__":
    main()
