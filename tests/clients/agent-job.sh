# shellcheck shell=sh
# agent-job.sh - what a coding agent does in its worktree, as one script:
# tests/clients/test_egretd_worktree.sh and tests/deploy/docker.sh run it
# through egretd, as COMMAND, with pkgs.test (tests/clients/fixtures.py's
# files: an npm tarball, a PEP 503 index, a Go module proxy) allowed on
# port 80. It prints what it found, one a line; set -e: the first failure
# ends it.
set -e
test -e "$HOME/seen" && echo "home: used" || echo "home: fresh"
touch "$HOME/seen"
printf 'node_modules/\nhello\n' >.gitignore
npm install --no-audit --no-fund --fetch-retries=0 http://pkgs.test/npm/egret-hello-1.0.0.tgz >&2
rm -rf node_modules
npm ci --no-audit --no-fund --fetch-retries=0 >&2
echo "npm: $(node -e 'console.log(require("egret-hello"))')"
python3 -m pip install --user --break-system-packages --disable-pip-version-check \
	--index-url http://pkgs.test/simple/ --trusted-host pkgs.test egret-hello >&2
echo "pip: $(python3 -c 'import egret_hello; print(egret_hello.MARK)')"
printf 'module egret.test/agent\n\ngo 1.19\n\nrequire egret.test/hello v1.0.0\n' >go.mod
printf 'package main\n\nimport (\n\t"fmt"\n\t"egret.test/hello"\n)\n\nfunc main() { fmt.Println(hello.Mark) }\n' >main.go
GOPROXY=http://pkgs.test/goproxy GOSUMDB=off GOFLAGS=-mod=mod go build -o hello . >&2
echo "go: $(./hello)"
echo edited >>README
mkdir -p src/deep && echo new >src/deep/file
git -c user.name=agent -c user.email=agent@example.invalid add -A
git -c user.name=agent -c user.email=agent@example.invalid commit -qm "the agent"
echo "uncommitted: $(git status --porcelain | wc -l)"
echo "uid: $(id -u)"
