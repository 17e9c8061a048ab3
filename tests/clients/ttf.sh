# shellcheck shell=bash
# ttf.sh - time to failure of real clients denied by egret, with their
# default settings (sourced by tests/clients/run.sh --time-to-failure,
# which `make bench-clients` runs). A benchmark, not a test: it prints a
# table (docs/CLIENTS.md keeps one) and asserts nothing but that each
# denied client failed.
#
# For each errno egret can refuse a connect with, one attempt runs every
# client against 203.0.113.32 (an address the policy does not allow); one
# more runs them against mirror.test (a name it does not allow: NXDOMAIN).
# SC2016: single-quoted $... belongs to COMMAND's shell.
# shellcheck disable=SC2016

TTF_ERRNOS=(EPERM ECONNREFUSED ENETUNREACH EHOSTUNREACH)

# COMMAND of each attempt: every client in turn, one line each:
#   NAME RC SECONDS FIRST-ERROR-LINE
TTF_SCRIPT='
t=$1 py=$2 gobin=$3
run() {
	name=$1; shift
	s=$(date +%s%N)
	"$@" >out.txt 2>&1 </dev/null
	rc=$?
	e=$(date +%s%N)
	msg=$(grep -iE "error|fail|refused|unreachable|route|denied|permitted|not known|resolve|unable|could not|cannot" out.txt |
		grep -v "^\s*at " | head -n 1 | cut -c1-110)
	echo "$name $rc $(((e - s) / 1000000)) $msg"
	rm -rf c n t out.txt
}
run curl curl -sS -o /dev/null "http://$t/files/hello.txt"
run wget wget -O /dev/null "http://$t/files/hello.txt"
run git-http git clone -q "http://$t/git/hello.git" c
run git-daemon git clone -q "git://$t/hello.git" c
run pip "$py" -m pip install --disable-pip-version-check --no-cache-dir --target t \
	--index-url "http://$t/simple/" --trusted-host "$t" egret-hello
run npm npm install --no-audit --no-fund --prefix n "http://$t/npm/egret-hello-1.0.0.tgz"
run node node -e "fetch(\"http://$t/files/hello.txt\").then(r => r.text()).catch(e => { console.error(\"error: \" + (e.cause || e)); process.exit(1); })"
run go-pure "$gobin/goget-pure" "http://$t/files/hello.txt"
run go-cgo "$gobin/goget-cgo" "http://$t/files/hello.txt"
run python "$py" -c "import urllib.request; urllib.request.urlopen(\"http://$t/files/hello.txt\")"
'

# One attempt: ERRNO|default TARGET -> lines as above in $TDIR/ttf.ERRNO.TARGET
ttf_attempt() {
	local errno=()
	[ "$1" = default ] || errno=(--deny-errno "$1")
	fresh_home
	client "${ALLOWED[@]}" "${errno[@]}" -- sh -c "$TTF_SCRIPT" sh "$2" "$PY" "$CLIENTS_BUILD"
	echo "$OUT" >"$TDIR/ttf.$1.$2"
	rm -rf "$H"
}

# The table: a row per client, a column per errno, then the denied name.
ttf_table() {
	local e name first row secs rc msg
	printf '| client |'
	for e in "${TTF_ERRNOS[@]}"; do printf ' address, %s |' "$e"; done
	printf ' name (NXDOMAIN) | what it says (address, ECONNREFUSED) |\n|---|'
	for e in "${TTF_ERRNOS[@]}"; do printf -- '---:|'; done
	printf -- '---:|---|\n'
	while read -r name _; do
		row="| $name |"
		for e in "${TTF_ERRNOS[@]}" name; do
			if [ "$e" = name ]; then
				first="$TDIR/ttf.default.mirror.test"
			else
				first="$TDIR/ttf.$e.$MIRROR4"
			fi
			read -r _ rc secs _ < <(grep "^$name " "$first")
			[ "$rc" = 0 ] && TTF_LEAK="$TTF_LEAK $name/$e"
			row="$row $(awk -v ms="$secs" 'BEGIN { printf "%.1f s", ms / 1000 }') |"
		done
		msg=$(grep "^$name " "$TDIR/ttf.ECONNREFUSED.$MIRROR4" | cut -d' ' -f4- | sed 's/|/\\|/g')
		echo "$row \`$msg\` |"
	done <"$TDIR/ttf.EPERM.$MIRROR4"
}

t_time_to_failure() {
	local e
	TTF_LEAK=""
	for e in "${TTF_ERRNOS[@]}"; do
		note "time to failure: $e, denied address"
		ttf_attempt "$e" "$MIRROR4"
	done
	note "time to failure: denied name"
	ttf_attempt default mirror.test
	ttf_table | tee "$CLIENTS_BUILD/time-to-failure.md"
	[ -z "$TTF_LEAK" ] || fail "denied clients that succeeded:$TTF_LEAK"
}
