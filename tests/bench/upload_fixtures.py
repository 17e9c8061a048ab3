#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""upload_fixtures.py - large synthetic fixtures for tests/bench/uploads.sh:
what real clients *send* (not receive) to a registry or forge while they
fetch, so that the catalog's default upload budgets (docs/POLICY.md,
"Upload budgets") rest on measured figures.

    upload_fixtures.py DIR NPM PIP COMMITS REFS
    upload_fixtures.py grow BARE COMMITS REFS    (the forge moves on)

DIR/www/npm/         NPM tarballs egret-pNNNN-1.0.0.tgz, and DIR/npmproj/
                     {package.json, package-lock.json} depending on all of
                     them (lockfile v3, resolved URLs on http://pkgs.test/)
DIR/www/simple/      a PEP 503 index of PIP projects egret-wNNNN, one wheel
                     each (DIR/www/wheels/), and DIR/req.txt naming all
DIR/git/big.git      a bare repository: COMMITS commits on main, REFS more
                     branches and tags pointing into its history
"""
import base64
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zipfile


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    os.chmod(path, 0o644)


def npm(top, n):
    deps = {}
    pkgs = {"": {"name": "egret-proj", "version": "1.0.0", "dependencies": deps}}
    for i in range(n):
        name = "egret-p%04d" % i
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as t:
            for path, text in (("package/package.json",
                                '{"name": "%s", "version": "1.0.0"}\n' % name),
                               ("package/index.js", "module.exports = %d;\n" % i)):
                data = text.encode()
                info = tarfile.TarInfo(path)
                info.size, info.mode, info.mtime = len(data), 0o644, 1700000000
                t.addfile(info, io.BytesIO(data))
        data = buf.getvalue()
        write(os.path.join(top, "www", "npm", "%s-1.0.0.tgz" % name), data)
        deps[name] = "1.0.0"
        pkgs["node_modules/" + name] = {
            "version": "1.0.0",
            "resolved": "http://pkgs.test/npm/%s-1.0.0.tgz" % name,
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
        }
    proj = os.path.join(top, "npmproj")
    write(os.path.join(proj, "package.json"),
          json.dumps({"name": "egret-proj", "version": "1.0.0", "dependencies": deps}))
    write(os.path.join(proj, "package-lock.json"),
          json.dumps({"name": "egret-proj", "version": "1.0.0", "lockfileVersion": 3,
                      "requires": True, "packages": pkgs}))


def pip(top, n):
    names = []
    for i in range(n):
        proj, mod = "egret-w%04d" % i, "egret_w%04d" % i
        wheel = "%s-1.0-py3-none-any.whl" % mod
        files = {
            "%s/__init__.py" % mod: "N = %d\n" % i,
            "%s-1.0.dist-info/METADATA" % mod:
                "Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n" % proj,
            "%s-1.0.dist-info/WHEEL" % mod:
                "Wheel-Version: 1.0\nGenerator: egret\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        }
        record = []
        for path, text in files.items():
            d = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest())
            record.append("%s,sha256=%s,%d" % (path, d.rstrip(b"=").decode(), len(text)))
        record.append("%s-1.0.dist-info/RECORD,," % mod)
        files["%s-1.0.dist-info/RECORD" % mod] = "\n".join(record) + "\n"
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for path, text in files.items():
                z.writestr(path, text)
        data = buf.getvalue()
        write(os.path.join(top, "www", "wheels", wheel), data)
        write(os.path.join(top, "www", "simple", proj, "index.html"),
              '<!DOCTYPE html><html><body><a href="../../wheels/%s#sha256=%s">%s</a>'
              "</body></html>\n" % (wheel, hashlib.sha256(data).hexdigest(), wheel))
        names.append(proj)
    write(os.path.join(top, "www", "simple", "index.html"),
          "<!DOCTYPE html><html><body>%s</body></html>\n" %
          "".join('<a href="%s/">%s</a>' % (p, p) for p in names))
    write(os.path.join(top, "req.txt"), "".join("%s==1.0\n" % p for p in names))


def fast_import(bare, commits, refs, first, tip=None):
    """COMMITS commits on main (after TIP, if given), each changing one of
    50 files, then REFS branches and tags into them, numbered from FIRST."""
    lines = []
    for i in range(1, commits + 1):
        blob = "line %d.%d\n" % (first, i)
        lines += ["blob", "mark :%d" % (2 * i), "data %d" % len(blob), blob,
                  "commit refs/heads/main", "mark :%d" % (2 * i + 1),
                  "committer egret <t@egret.invalid> %d +0000" % (1700000000 + first + i),
                  "data 8", "commit %d" % (i % 10)] + \
                 (["from " + tip] if tip and i == 1 else []) + \
                 ["M 100644 :%d f%d.txt" % (2 * i, i % 50), ""]
    for j in range(refs):
        at = 1 + (j * 7919) % commits
        kind = "refs/tags/t%06d" % (first + j) if j % 2 else "refs/heads/b%06d" % (first + j)
        lines += ["reset " + kind, "from :%d" % (2 * at + 1), ""]
    subprocess.run(["git", "--git-dir", bare, "fast-import", "--quiet"], check=True,
                   input="\n".join(lines).encode())


def git(top, commits, refs):
    bare = os.path.join(top, "git", "big.git")
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=top)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", bare], check=True, env=env)
    fast_import(bare, commits, refs, 0)
    subprocess.run(["git", "--git-dir", bare, "repack", "-adq"], check=True, env=env)
    write(os.path.join(bare, "git-daemon-export-ok"), "")


def grow(bare, commits, refs):
    tip = subprocess.run(["git", "--git-dir", bare, "rev-parse", "main"], check=True,
                         capture_output=True, text=True).stdout.strip()
    fast_import(bare, commits, refs, 100000, tip)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "grow":
        grow(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    if len(sys.argv) != 6:
        sys.exit("usage: upload_fixtures.py DIR NPM PIP COMMITS REFS")
    top = sys.argv[1]
    npm(top, int(sys.argv[2]))
    pip(top, int(sys.argv[3]))
    git(top, int(sys.argv[4]), int(sys.argv[5]))


if __name__ == "__main__":
    main()
