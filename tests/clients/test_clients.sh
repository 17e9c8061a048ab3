# shellcheck shell=bash
# test_clients.sh - one test per client (sourced by tests/clients/run.sh).
# Each: allowed, the artefact's marker comes back; denied by name and by
# address (denied_both), the client fails and nothing reaches the world.
# The t_client_https_* tests (at the end): the same artefacts over HTTPS,
# allowed on 443 only, each client trusting the suite's CA its own way; the
# server saw the name in each ClientHello's SNI (assert_served_tls).
# SC2016: single-quoted $... belongs to COMMAND's shell.
# shellcheck disable=SC2016

t_client_curl() {
	fresh_home
	client "${ALLOWED[@]}" -- curl -sS http://pkgs.test/files/hello.txt
	assert_eq 0 "$RC" "curl exit status $(said)"
	assert_eq egret-hello-file "$OUT" "curl http://pkgs.test/files/hello.txt $(said)"
	denied_both curl http curl -sS -o /dev/null http://@HOST@/files/hello.txt
}

# Uploads over plain HTTP to an allowed host, its connections Host-pinned
# (docs/SECURITY.md, "Host pinning", "Bodies"): curl -T of 8 MiB, with
# curl's own `Expect: 100-continue` (the body after the server's 100), and
# the same bytes from a pipe as a chunked upload (curl expects a 100 for
# it too). The evidence is the server's own count and hash of what it
# read, and egret's log: it judged these requests.
t_client_curl_upload() {
	local sum log="$TDIR/upload.log"
	fresh_home
	head -c 8388608 /dev/urandom >"$H/upload.bin" || fail "cannot write $H/upload.bin"
	chmod 0644 "$H/upload.bin"
	sum=$(sha256sum "$H/upload.bin" | awk '{ print $1 }')
	client "${ALLOWED[@]}" --log "$log" --log-allowed -- \
		curl -sS -T upload.bin http://pkgs.test/upload/put.bin
	assert_eq 0 "$RC" "curl -T exit status $(said)"
	assert_eq "ok 8388608 $sum" "$OUT" "curl -T of 8 MiB, the server's count and hash $(said)"
	assert_uploaded PUT /upload/put.bin "8388608 $sum counted 100-continue" "curl -T"
	client "${ALLOWED[@]}" --log "$log" --log-allowed -- sh -c \
		'curl -sS -H "Transfer-Encoding: chunked" --data-binary @- \
			http://pkgs.test/upload/chunked.bin <upload.bin'
	assert_eq 0 "$RC" "curl chunked upload exit status $(said)"
	assert_eq "ok 8388608 $sum" "$OUT" "chunked upload of 8 MiB, the server's count and hash $(said)"
	assert_uploaded POST /upload/chunked.bin "8388608 $sum chunked 100-continue" "curl chunked"
	grep -qF '"kind":"http","verdict":"allow"' "$log" ||
		fail "egret judged no HTTP request: the uploads were not Host-pinned ($(head -c 600 "$log"))"
}

t_client_wget() {
	fresh_home
	client "${ALLOWED[@]}" -- wget -q -O - http://pkgs.test/files/hello.txt
	assert_eq 0 "$RC" "wget exit status $(said)"
	assert_eq egret-hello-file "$OUT" "wget http://pkgs.test/files/hello.txt $(said)"
	# wget's defaults: 20 tries, but none for a refused connection or a
	# name that does not exist - what egret answers.
	denied_both wget http wget -q -O /dev/null http://@HOST@/files/hello.txt
}

t_client_git_http() {
	fresh_home
	client "${ALLOWED[@]}" -- sh -c 'git clone -q http://git.test/git/hello.git c && cat c/README'
	assert_eq 0 "$RC" "git clone over smart HTTP, exit status $(said)"
	assert_eq egret-hello-git "$OUT" "the clone's README $(said)"
	assert_served POST /git/hello.git/git-upload-pack 200 "git clone over smart HTTP"
	denied_both "git clone http" http git clone -q http://@HOST@/git/hello.git c
}

t_client_git_daemon() {
	fresh_home
	client "${ALLOWED[@]}" -- sh -c 'git clone -q git://git.test/hello.git c && cat c/README'
	assert_eq 0 "$RC" "git clone git://, exit status $(said)"
	assert_eq egret-hello-git "$OUT" "the clone's README $(said)"
	denied_both "git clone git://" git git clone -q git://@HOST@/hello.git c
}

# An upload budget (docs/POLICY.md, "Upload budgets") on the forge: with
# 1 MiB, git clone and fetch work (they send want/have lines), a push of a
# 2 MiB commit (random bytes: no compression helps) fails and the far
# repository has no new ref or object; with 8 MiB the same push lands.
t_client_git_push_budget() {
	local push_git=$FIXTURES/git/push.git script
	fresh_home
	script='git clone -q git://git.test/hello.git c && cd c || exit 1
git fetch -q origin && echo "fetch: ok"
head -c 2097152 /dev/urandom >blob && git add blob &&
	git -c user.name=a -c user.email=a@egret.invalid commit -qm big || exit 1
if git push -q git://git.test/push.git "HEAD:refs/heads/$1" 2>/dev/null; then
	echo "push: ok"
else
	echo "push: failed"
fi'
	client "${ALLOWED[@]}" --upload-limit 1M -- sh -c "$script" sh big1
	assert_eq 0 "$RC" "egret exit status $(said)"
	assert_eq "fetch: ok" "$(grep '^fetch:' <<<"$OUT")" "git clone + fetch under a 1 MiB budget $(said)"
	assert_eq "push: failed" "$(grep '^push:' <<<"$OUT")" "git push of 2 MiB past a 1 MiB budget $(said)"
	! git --git-dir="$push_git" rev-parse -q --verify refs/heads/big1 >/dev/null ||
		fail "the far repository has the refused push's branch"
	[ "$(git --git-dir="$push_git" count-objects -v | awk '/^size-pack:/ { print $2 }')" -lt 1024 ] ||
		fail "the far repository took a pack of the refused push: $(git --git-dir="$push_git" count-objects -v)"
	grep -qE '^egret:   git\.test: sent [0-9.]+ (B|KiB|MiB), received .*\(upload budget 1\.0 MiB, exceeded: sends refused\)$' <<<"$ERR" ||
		fail "summary: want git.test's line with its budget exceeded $(said)"

	fresh_home
	rm -rf "$H/c"
	client "${ALLOWED[@]}" --upload-limit 8M -- sh -c "$script" sh big8
	assert_eq "push: ok" "$(grep '^push:' <<<"$OUT")" "the same push under an 8 MiB budget $(said)"
	git --git-dir="$push_git" rev-parse -q --verify refs/heads/big8 >/dev/null ||
		fail "the far repository lacks the pushed branch big8"
}

t_client_pip() {
	local pip=("$PY" -m pip install --disable-pip-version-check --no-cache-dir --target pylib)
	fresh_home
	client "${ALLOWED[@]}" -- sh -c '"$@" --index-url http://pkgs.test/simple/ \
		--trusted-host pkgs.test egret-hello >&2 &&
		PYTHONPATH=pylib "$0" -c "import egret_hello; print(egret_hello.MARK)"' "$PY" "${pip[@]}"
	assert_eq 0 "$RC" "pip install from a PEP 503 index, exit status $(said)"
	assert_eq egret-hello-wheel "$OUT" "the installed module $(said)"
	assert_served GET /wheels/egret_hello-1.0-py3-none-any.whl 200 "pip install"
	# (Over HTTP pip wants --trusted-host, or it ignores the index unasked.)
	denied_both pip http "${pip[@]}" --index-url http://@HOST@/simple/ \
		--trusted-host @HOST@ egret-hello
}

t_client_npm() {
	local npm=(npm install --no-audit --no-fund --prefix n)
	fresh_home
	client "${ALLOWED[@]}" -- sh -c '"$@" http://pkgs.test/npm/egret-hello-1.0.0.tgz >&2 &&
		node -e "console.log(require(\"./n/node_modules/egret-hello\"))"' sh "${npm[@]}"
	assert_eq 0 "$RC" "npm install of a tarball, exit status $(said)"
	assert_eq egret-hello-npm "$OUT" "the installed package $(said)"
	# npm retries a failed fetch twice, 10 s then 60 s apart, whatever the
	# error: the outcome is the same with no retries, and docs/CLIENTS.md
	# has the time it takes with them.
	denied_both npm http "${npm[@]}" --fetch-retries=0 http://@HOST@/npm/egret-hello-1.0.0.tgz
}

# Node's three ways to a name: getaddrinfo (dns.lookup, what fetch uses),
# its own c-ares resolver reading resolv.conf (dns.resolve4), and fetch.
NODE_CLIENT='
const dns = require("dns"), host = process.argv[1];
dns.lookup(host, { family: 4 }, (e, a) => {
  console.log("lookup: " + (e ? "err " + e.code : a));
  dns.resolve4(host, (e2, r) => {
    console.log("resolve4: " + (e2 ? "err " + e2.code : r.join(",")));
    fetch("http://" + host + "/files/hello.txt").then(r => r.text())
      .then(t => console.log("fetch: " + t.trim()))
      .catch(e3 => { console.log("fetch: err " + ((e3.cause && e3.cause.code) || e3)); process.exitCode = 1; });
  });
});'

t_client_node() {
	fresh_home
	client "${ALLOWED[@]}" -- node -e "$NODE_CLIENT" pkgs.test
	assert_eq 0 "$RC" "node exit status $(said)"
	assert_eq "lookup: $PKGS4" "$(sed -n 1p <<<"$OUT")" "dns.lookup $(said)"
	assert_eq "resolve4: $PKGS4" "$(sed -n 2p <<<"$OUT")" "dns.resolve4 $(said)"
	assert_eq "fetch: egret-hello-file" "$(sed -n 3p <<<"$OUT")" "fetch $(said)"
	denied_both node http node -e "$NODE_CLIENT" @HOST@
	fresh_home
	client "${ALLOWED[@]}" -- node -e "$NODE_CLIENT" mirror.test
	assert_eq "lookup: err ENOTFOUND" "$(sed -n 1p <<<"$OUT")" "dns.lookup mirror.test $(said)"
	assert_eq "resolve4: err ENOTFOUND" "$(sed -n 2p <<<"$OUT")" "dns.resolve4 mirror.test $(said)"
}

t_client_go() {
	local v
	for v in pure cgo; do
		fresh_home
		client "${ALLOWED[@]}" -- "$CLIENTS_BUILD/goget-$v" http://pkgs.test/files/hello.txt
		assert_eq 0 "$RC" "Go ($v resolver) exit status $(said)"
		assert_eq egret-hello-file "$OUT" "Go ($v resolver) GET $(said)"
		rm -rf "$H"
		denied_both "Go ($v resolver)" http "$CLIENTS_BUILD/goget-$v" http://@HOST@/files/hello.txt
	done
}

# getent (glibc), dig and host (bind9's own resolver), asked for an allowed
# name and for a denied one - also straight at the world's resolver, which
# egret answers in its place.
t_client_resolvers() {
	local script
	fresh_home
	script=$(write_script resolve.sh <<'EOF'
getent ahostsv4 "$1" >getent.out; echo "getent: rc=$? $(awk 'NR == 1 { print $1 }' getent.out)"
echo "dig: $(dig +time=3 +tries=1 +short "$1" A)"
echo "host: $(host -W 3 -t A "$1" | head -n 1)"
echo "dig-world: $(dig +time=3 +tries=1 +noall +comments @198.51.100.53 "$1" A | sed -n 's/.*status: \([A-Z]*\),.*/\1/p')"
EOF
)
	client "${ALLOWED[@]}" -- sh "$script" pkgs.test
	assert_eq 0 "$RC" "resolvers, exit status $(said)"
	assert_eq "rc=0 $PKGS4" "$(got getent)" "getent ahostsv4 pkgs.test $(said)"
	assert_eq "$PKGS4" "$(got dig)" "dig pkgs.test $(said)"
	assert_eq "pkgs.test has address $PKGS4" "$(got host)" "host pkgs.test $(said)"
	assert_eq NOERROR "$(got dig-world)" "dig @world pkgs.test $(said)"
	client "${ALLOWED[@]}" -- sh "$script" mirror.test
	assert_eq "" "$(got dig)" "dig mirror.test $(said)"
	assert_eq "Host mirror.test not found: 3(NXDOMAIN)" "$(got host)" "host mirror.test $(said)"
	assert_eq NXDOMAIN "$(got dig-world)" "dig @world mirror.test $(said)"
	assert_eq "rc=2 " "$(got getent)" "getent mirror.test: 2, not found $(said)"
	assert_not_asked mirror.test "resolvers"
}

got() {
	sed -n "s/^$1: //p" <<<"$OUT" | head -n 1
}

# apt as an ordinary user (docs/CLIENTS.md): its own lists, cache and
# sources under HOME, no lock on the system's; update, download, unpack.
# Installing into the system needs root, which an attempt never is.
APT_SCRIPT='
set -e
mkdir -p apt/lists/partial apt/cache/archives/partial apt/sources.list.d
echo "deb [trusted=yes] http://$1/debian ./" >apt/sources.list
cat >apt/apt.conf <<EOF
Dir::Etc::SourceList "$HOME/apt/sources.list";
Dir::Etc::SourceParts "$HOME/apt/sources.list.d";
Dir::State::Lists "$HOME/apt/lists";
Dir::Cache "$HOME/apt/cache";
Debug::NoLocking "true";
EOF
export APT_CONFIG=$HOME/apt/apt.conf
apt-get -q update >&2
apt-get -q download egret-hello >&2
dpkg -x egret-hello_1.0_all.deb root
cat root/usr/share/egret-hello/hello.txt'

t_client_apt() {
	fresh_home
	client "${ALLOWED[@]}" -- sh -c "$APT_SCRIPT" sh pkgs.test
	assert_eq 0 "$RC" "apt-get update + download as $TEST_USER, exit status $(said)"
	assert_eq egret-hello-deb "$OUT" "the downloaded package's file $(said)"
	assert_served GET /debian/./egret-hello_1.0_all.deb 200 "apt-get download"
	denied_both apt-get http sh -c "$APT_SCRIPT" sh @HOST@
}

# --- over HTTPS ---------------------------------------------------------------
# The same artefacts from server.py's TLS side (443), allowed there only
# (ALLOWED_TLS), each client with its own TLS stack and its normal SNI (the
# URL's name): curl and node, pip and python (OpenSSL), wget and git
# (GnuTLS), Go (crypto/tls). Each is given the suite's CA ($CA) the way
# its users give one; none is told to skip verification.

# Over IPv4 and over IPv6 (the others take what getaddrinfo orders first).
t_client_https_curl() {
	local fam peer local_addr
	for fam in 4 6; do
		peer=CLIENT$fam local_addr=PKGS$fam
		fresh_home
		client "${ALLOWED_TLS[@]}" -- curl -"$fam" -sS --cacert "$CA" \
			https://pkgs.test/files/hello.txt
		assert_eq 0 "$RC" "curl -$fam https exit status $(said)"
		assert_eq egret-hello-file "$OUT" "curl -$fam https://pkgs.test/files/hello.txt $(said)"
		assert_served_tls pkgs.test GET /files/hello.txt 200 "curl -$fam https"
		tail -n +$((SRV_SEEN + 1)) "$SRV_LOG" | grep -qx "conn ${!peer} ${!local_addr}" ||
			fail "curl -$fam https: no connection from ${!peer} to ${!local_addr}: $(cat "$SRV_LOG")"
		rm -rf "$H"
	done
	# Denied over HTTPS as over HTTP (mirror.test's 443 is served too).
	local ALLOWED=("${ALLOWED_TLS[@]}")
	denied_both "curl https" http curl -sS -o /dev/null --cacert "$CA" \
		https://@HOST@/files/hello.txt
}

t_client_https_wget() {
	fresh_home
	client "${ALLOWED_TLS[@]}" -- wget -q --ca-certificate="$CA" -O - \
		https://pkgs.test/files/hello.txt
	assert_eq 0 "$RC" "wget https exit status $(said)"
	assert_eq egret-hello-file "$OUT" "wget https://pkgs.test/files/hello.txt $(said)"
	assert_served_tls pkgs.test GET /files/hello.txt 200 "wget https"
}

t_client_https_git() {
	fresh_home
	client "${ALLOWED_TLS[@]}" -- sh -c 'git -c http.sslCAInfo="$1" clone -q \
		https://git.test/git/hello.git c && cat c/README' sh "$CA"
	assert_eq 0 "$RC" "git clone over smart HTTPS, exit status $(said)"
	assert_eq egret-hello-git "$OUT" "the clone's README $(said)"
	assert_served_tls git.test POST /git/hello.git/git-upload-pack 200 "git clone https"
}

t_client_https_pip() {
	local pip=("$PY" -m pip install --disable-pip-version-check --no-cache-dir --target pylib)
	fresh_home
	# No --trusted-host: pip verifies the index's certificate.
	client "${ALLOWED_TLS[@]}" -- sh -c '"$@" --index-url https://pkgs.test/simple/ \
		egret-hello >&2 &&
		PYTHONPATH=pylib "$0" -c "import egret_hello; print(egret_hello.MARK)"' \
		"$PY" "${pip[@]}" --cert "$CA"
	assert_eq 0 "$RC" "pip install from a PEP 503 index over HTTPS, exit status $(said)"
	assert_eq egret-hello-wheel "$OUT" "the installed module $(said)"
	assert_served_tls pkgs.test GET /wheels/egret_hello-1.0-py3-none-any.whl 200 "pip install https"
}

t_client_https_npm() {
	local npm=(npm install --no-audit --no-fund --prefix n --cafile "$CA")
	fresh_home
	client "${ALLOWED_TLS[@]}" -- sh -c '"$@" https://pkgs.test/npm/egret-hello-1.0.0.tgz >&2 &&
		node -e "console.log(require(\"./n/node_modules/egret-hello\"))"' sh "${npm[@]}"
	assert_eq 0 "$RC" "npm install of a tarball over HTTPS, exit status $(said)"
	assert_eq egret-hello-npm "$OUT" "the installed package $(said)"
	assert_served_tls pkgs.test GET /npm/egret-hello-1.0.0.tgz 200 "npm install https"
}

NODE_HTTPS='
require("https").get(process.argv[1], r => {
  let b = "";
  r.setEncoding("utf8");
  r.on("data", d => b += d);
  r.on("end", () => console.log(r.statusCode + " " + b.trim()));
}).on("error", e => { console.log("err " + (e.code || e)); process.exitCode = 1; });'

t_client_https_node() {
	fresh_home
	client "${ALLOWED_TLS[@]}" --setenv "NODE_EXTRA_CA_CERTS=$CA" -- \
		node -e "$NODE_HTTPS" https://pkgs.test/files/hello.txt
	assert_eq 0 "$RC" "node https.get exit status $(said)"
	assert_eq "200 egret-hello-file" "$OUT" "node https.get $(said)"
	assert_served_tls pkgs.test GET /files/hello.txt 200 "node https.get"
}

t_client_https_go() {
	local v
	for v in pure cgo; do
		fresh_home
		client "${ALLOWED_TLS[@]}" --setenv "SSL_CERT_FILE=$CA" -- \
			"$CLIENTS_BUILD/goget-$v" https://pkgs.test/files/hello.txt
		assert_eq 0 "$RC" "Go ($v resolver) https exit status $(said)"
		assert_eq egret-hello-file "$OUT" "Go ($v resolver) GET https $(said)"
		assert_served_tls pkgs.test GET /files/hello.txt 200 "Go ($v resolver) https"
		rm -rf "$H"
	done
}

PY_HTTPS='
import ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[2])
print(urllib.request.urlopen(sys.argv[1], context=ctx).read().decode().strip())'

t_client_https_python() {
	fresh_home
	client "${ALLOWED_TLS[@]}" -- "$PY" -c "$PY_HTTPS" https://pkgs.test/files/hello.txt "$CA"
	assert_eq 0 "$RC" "python urllib https exit status $(said)"
	assert_eq egret-hello-file "$OUT" "python urlopen https://pkgs.test/files/hello.txt $(said)"
	assert_served_tls pkgs.test GET /files/hello.txt 200 "python urllib https"
}
