#!/bin/bash
# uploads.sh - what real clients *send* to a registry or forge while they
# only fetch: the figures the catalog's default upload budgets rest on
# (docs/POLICY.md, "Upload budgets"; `make bench-uploads`). Not a test.
#
# In the sealed test world (tests/world/world.sh), against the real-client
# suite's server (tests/clients/server.py) serving large synthetic
# fixtures (upload_fixtures.py): npm ci of a lockfile of BENCH_NPM
# packages, pip install of a requirements file of BENCH_PIP projects, git
# clone of a repository of BENCH_COMMITS commits and BENCH_REFS refs over
# smart HTTP, then a git fetch after the forge moved on (BENCH_COMMITS / 10
# more commits, BENCH_REFS / 4 more refs). Each runs in an attempt with
# --log; the figures are its destination records (bytes sent, received,
# connections), printed as a table and kept in BENCH_OUT/uploads.txt.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EGRET=$ROOT/build/egret
HELPERS=$ROOT/build/helpers
NPMN=${BENCH_NPM:-2000}
PIPN=${BENCH_PIP:-300}
COMMITS=${BENCH_COMMITS:-20000}
REFS=${BENCH_REFS:-4000}
OUT=${BENCH_OUT:-$ROOT/build/bench/results}
PY=/usr/bin/python3

[ "$(id -u)" = 0 ] || { echo "uploads: needs root" >&2; exit 1; }
[ -x "$EGRET" ] && [ -x "$HELPERS/sink" ] || { echo "uploads: run make && make helpers first" >&2; exit 1; }
mkdir -p "$OUT"
PKGS4=203.0.113.30 GIT4=203.0.113.31
# shellcheck disable=SC2034 # world.sh reads it
WORLD_EXTRA_HOSTS="pkgs.test=$PKGS4 git.test=$GIT4"
# shellcheck source=../world/world.sh
. "$ROOT/tests/world/world.sh"
world_up || exit 1
TMP=$(mktemp -d /tmp/egret-uploads.XXXXXX)
chmod 755 "$TMP"
trap 'world_down; rm -rf "$TMP"' EXIT

echo "uploads: fixtures ($NPMN npm packages, $PIPN wheels, $COMMITS commits, $REFS refs)" >&2
"$PY" "$ROOT/tests/bench/upload_fixtures.py" "$TMP/fx" "$NPMN" "$PIPN" "$COMMITS" "$REFS" || exit 1
: >"$TMP/server.log"
nsenter --net="/run/netns/$WORLD_NS" -- "$PY" "$ROOT/tests/clients/server.py" "$TMP/server.log" \
	"$TMP/fx/www" "$TMP/fx/git" "$PKGS4:80" "$GIT4:80" >"$TMP/server.out" 2>&1 &
for _ in $(seq 100); do grep -q '^ready' "$TMP/server.out" && break; sleep 0.1; done
grep -q '^ready' "$TMP/server.out" || { echo "uploads: server did not start" >&2; exit 1; }

RESULTS=$OUT/uploads.txt
: >"$RESULTS"
# run NAME DEST COMMAND...: COMMAND in an attempt in $TMP/work (HOME too);
# the destination record of DEST from its log.
run() {
	local name=$1 dest=$2 log=$TMP/$1.json
	shift 2
	if ! "${WORLD_IN_CLIENT[@]}" "$EGRET" run --allow-root -q --dns-upstream "$WORLD_DNS" \
		--allow pkgs.test:80 --allow git.test:80 --home "$TMP/work" --chdir "$TMP/work" \
		--log "$log" -- "$@" >"$TMP/$name.out" 2>&1; then
		echo "uploads: $name failed:" >&2
		tail -20 "$TMP/$name.out" >&2
		exit 1
	fi
	jq -r --arg n "$dest" --arg w "$name" 'select(.kind == "destination" and .name == $n) |
		"\($w) \(.name) sent=\(.sent) received=\(.received) connections=\(.connections)"' \
		"$log" | tee -a "$RESULTS"
}
mkdir -p "$TMP/work"
cp "$TMP/fx/npmproj/"* "$TMP/work/"
cp "$TMP/fx/req.txt" "$TMP/work/"
echo "uploads: npm ci" >&2
run npm-ci pkgs.test npm ci --no-audit --no-fund --cache "$TMP/work/.npm" --prefer-online
echo "uploads: pip install" >&2
run pip-install pkgs.test "$PY" -m pip install --disable-pip-version-check --no-cache-dir \
	--no-deps --target "$TMP/work/pylib" --index-url http://pkgs.test/simple/ \
	--trusted-host pkgs.test -r req.txt
echo "uploads: git clone" >&2
run git-clone git.test git clone -q http://git.test/git/big.git clone
# The forge moves on: more commits on main, more branches and tags.
"$PY" "$ROOT/tests/bench/upload_fixtures.py" grow "$TMP/fx/git/big.git" \
	"$((COMMITS / 10))" "$((REFS / 4))" || exit 1
echo "uploads: git fetch" >&2
run git-fetch git.test git -C clone fetch -q origin
echo
echo "| client (fixture) | bytes sent to the registry or forge | received | connections |"
echo "|---|---|---|---|"
while read -r w _ s r c; do
	case $w in
	npm-ci) what="npm ci, lockfile of $NPMN packages" ;;
	pip-install) what="pip install -r, $PIPN projects" ;;
	git-clone) what="git clone, $COMMITS commits and $REFS refs" ;;
	git-fetch) what="git fetch after $((COMMITS / 10)) commits and $((REFS / 4)) refs more" ;;
	esac
	echo "| $what | ${s#sent=} | ${r#received=} | ${c#connections=} |"
done <"$RESULTS"
