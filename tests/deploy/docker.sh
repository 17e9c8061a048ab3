#!/bin/bash
# shellcheck disable=SC2015,SC2016,SC2013 # `A && ok || bad` (ok never fails); sh -c scripts; words of subtree_control
# tests/deploy/docker.sh - egretd in a Docker container beside an unchanged,
# unprivileged miner container, for real (docs/DEPLOYMENT.md, "Docker").
#
# A dockerd of its own (its data root, exec root and socket; no iptables,
# no default bridge), images imported from directories made here out of
# this machine's own binaries and their libraries (no registry), and one
# --internal network with no route out, 203.0.113.0/24, on which:
#   world-a 203.0.113.10  DNS for the test names, sink on 80 and 443
#   world-b 203.0.113.11  sink on 80: a destination no policy allows
#   miner   203.0.113.2   uid 1000, Docker's default capabilities and
#                         seccomp, egretd's socket directory read-only
# egretd runs in a container of its own with the host's PID and cgroup
# namespaces, the host's cgroup2 and bpffs mounts, its state in host
# directories, and no network but compose's internal one for its metrics,
# which a real Prometheus (Debian's binary, in an image made here) scrapes.
#
# Asserted: an ecosystem's name (npm) and a repository's extra host
# (octo/app) work, the latter only for that repository; a denied address
# is refused and nothing reaches world-b; the miner's own traffic is not
# restricted; the miner has no added capability and is not root; killing
# egretd's container leaves the attempt enforced (nothing reaches the
# world meanwhile) and a restarted egretd container re-adopts it; a
# Prometheus scraping egretd in the Compose and the DaemonSet shapes
# answers, through its HTTP API, the attempt and refusal counts of an
# attempt made for it, exactly, and promtool passes the exposition;
# nothing is left behind. Root only. Usage: tests/deploy/docker.sh
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# EGRET, HELPERS: another build's (make deploy-test OUT=...).
EGRET=${EGRET:-$ROOT/build/egret} HELPERS=${HELPERS:-$ROOT/build/helpers}
D=/run/egret-docker-$$
DATA=/var/lib/egret-docker-$$
NET=egt-net-$$
DOCKER=(/usr/bin/docker -H "unix://$D/docker.sock")
PASSED=0 FAILED=0

say() { echo "docker.sh: $*"; }
ok() { echo "ok    $1"; PASSED=$((PASSED + 1)); }
bad() { echo "FAIL  $1"; shift; for l in "$@"; do echo "        $l"; done; FAILED=$((FAILED + 1)); }
check() {	# WHAT WANT GOT
	if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "want '$2'" "got  '$3'"; fi
}
check_has() {	# WHAT NEEDLE HAYSTACK
	case "$3" in *"$2"*) ok "$1" ;; *) bad "$1" "want '$2' in" "$3" ;; esac
}

# ---- the daemon, the images, the network -------------------------------

cleanup() {
	local c
	# EGRET_DOCKER_KEEP=1: leave it all up to look at (then run again
	# with EGRET_DOCKER_CLEAN=PID to remove it).
	if [ "${EGRET_DOCKER_KEEP:-}" = 1 ]; then
		say "kept: DOCKER=(${DOCKER[*]}), $D, $DATA, dockerd pid ${DOCKERD_PID:-}"
		return
	fi
	if [ -S "$D/docker.sock" ]; then
		for c in $("${DOCKER[@]}" ps -aq 2>/dev/null); do
			"${DOCKER[@]}" rm -f "$c" >/dev/null 2>&1
		done
		"${DOCKER[@]}" network rm "$NET" >/dev/null 2>&1
		# compose's metrics network, the DaemonSet's pod network
		"${DOCKER[@]}" network prune -f >/dev/null 2>&1
		"${DOCKER[@]}" image prune -af >/dev/null 2>&1
	fi
	if [ -n "${DOCKERD_PID:-}" ]; then
		kill "$DOCKERD_PID" 2>/dev/null
		for _ in $(seq 150); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.1; done
	fi
	# What egretd's container may have left (it was killed on purpose):
	# its records say where, as egretd's container saw it.
	for rec in "$D"/state/run-egret/*; do
		[ -f "$rec" ] || continue
		local cg pins
		cg=$(sed -n 's|^cgroup=/sys/fs/cgroup||p' "$rec") pins=$(sed -n 's/^pins=//p' "$rec")
		[ -n "$cg" ] && { echo 1 >"$cg2$cg/cgroup.kill"; sleep 0.2; rmdir "$cg2$cg"; } 2>/dev/null
		[ -n "$pins" ] && rm -rf "$pins"
		say "removed what attempt $(basename "$rec") left"
	done
	# The parent cgroup dockerd made for its containers.
	rmdir "$cg2/docker" 2>/dev/null
	# runc may have enabled controllers at the cgroup2 root.
	# Refused (EBUSY) while the removed cgroups are still dying: again.
	[ -n "${subtree_before+x}" ] && for c in $(cat "$cg2/cgroup.subtree_control"); do
		case " $subtree_before " in *" $c "*) continue ;; esac
		for _ in $(seq 50); do
			echo "-$c" >"$cg2/cgroup.subtree_control" 2>/dev/null && break
			sleep 0.1
		done
	done
	# dockerd makes /run/docker/plugins whatever its exec root.
	[ "${run_docker_before:-1}" = 0 ] && rm -rf /run/docker
	umount "$DATA" 2>/dev/null
	rm -rf "$D" "$DATA"
}
trap cleanup EXIT

cg2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
[ "$(id -u)" = 0 ] || { say "root only"; exit 1; }
[ -n "$cg2" ] || { say "no cgroup2 mount"; exit 1; }
if [ ! -x /usr/sbin/dockerd ] || ! command -v docker-compose >/dev/null; then
	# Under CI=true it must run; elsewhere Docker is the operator's choice.
	if [ "${CI:-}" = true ]; then
		echo "FAIL  docker.sh: no dockerd or docker-compose (CI=true: tools/install-deps.sh deploy installs docker.io and docker-compose)"
		exit 1
	fi
	echo "SKIP: tests/deploy/docker.sh needs Debian's docker.io and docker-compose (sudo tools/install-deps.sh deploy)"
	exit 0
fi
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
subtree_before=$(cat "$cg2/cgroup.subtree_control")
[ -e /run/docker ] && run_docker_before=1 || run_docker_before=0
mkdir -p "$D" "$DATA" "$D/sock" "$D/world" "$D/out" \
	"$D/state/run-egret" "$D/state/uids" "$D/state/attempts" "$D/state/lib" "$D/etc-egret"
chmod 755 "$D" "$D/sock" "$D/etc-egret"
chmod 1777 "$D/out"

# dockerd sees cgroup v2 where it looks for it (this host mounts it at
# $cg2, beside v1): a private mount namespace with cgroup2 on /sys/fs/cgroup.
unshare --mount --propagation private sh -c '
	mount -t cgroup2 none /sys/fs/cgroup || exit 1
	exec /usr/sbin/dockerd --data-root "$1" --exec-root "$2/exec" \
		-H "unix://$2/docker.sock" --pidfile "$2/docker.pid" \
		--bridge=none --iptables=false --ip6tables=false --ip-masq=false \
		--userland-proxy=false --log-level=warn' sh "$DATA" "$D" >"$D/dockerd.log" 2>&1 &
DOCKERD_PID=$!
for _ in $(seq 300); do "${DOCKER[@]}" info >/dev/null 2>&1 && break; sleep 0.1; done
"${DOCKER[@]}" info >/dev/null 2>&1 || { say "dockerd did not start: $(tail -5 "$D/dockerd.log")"; exit 1; }
check "dockerd uses cgroup v2" 2 "$("${DOCKER[@]}" info --format '{{.CgroupVersion}}')"

# image NAME BINARY...: a root filesystem of these binaries and the
# libraries they load, a passwd with root and the miner, /tmp and /work:
# the world's containers, which are the test's scaffolding.
image() {
	local name=$1 r="$D/root-$1" f l
	shift
	mkdir -p "$r"/{etc,tmp,work,run,proc,sys,dev,usr/bin,usr/sbin,usr/lib,lib64}
	chmod 1777 "$r/tmp" "$r/work"
	for f in "$@"; do
		cp -aL "$f" "$r/usr/bin/$(basename "$f")"
		for l in $(ldd "$f" 2>/dev/null | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
			mkdir -p "$r$(dirname "$l")"
			cp -aL "$l" "$r$l"
		done
	done
	ln -s egret "$r/usr/bin/egretd" 2>/dev/null
	ln -s ../bin/egret "$r/usr/sbin/egretd"
	ln -s usr/bin "$r/bin"
	printf 'root:x:0:0::/root:/bin/sh\nminer:x:1000:1000::/work:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\nminer:x:1000:\nnogroup:x:65534:\n' >"$r/etc/group"
	tar -C "$r" -c . | "${DOCKER[@]}" import - "egt/$name:$$" >/dev/null ||
		{ say "import $name failed"; exit 1; }
	rm -rf "$r"
}
tools=(/bin/sh /bin/sleep /bin/cat /bin/touch /bin/id /bin/grep)
image world "$HELPERS/sink" /usr/sbin/dnsmasq "${tools[@]}"
# The operator's Prometheus: Debian's (package prometheus), no registry.
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	{ say "no prometheus/promtool (tools/install-deps.sh deploy installs Debian's prometheus)"; exit 1; }
image prometheus "$(command -v prometheus)"

# prom_start NAME NETWORK TARGET: a real Prometheus on NETWORK scraping
# TARGET with the shipped scrape configuration (tools/deploy/docker/
# prometheus.yml; the target's name and a 1 s interval are the test's),
# its storage a tmpfs of its own, its HTTP API on its own loopback only.
prom_start() {
	sed -e "s|egretd:9464|$3|" -e 's|scrape_interval: 15s|scrape_interval: 1s|' \
		"$ROOT/tools/deploy/docker/prometheus.yml" >"$D/$1.yml"
	chmod 644 "$D/$1.yml"
	"${DOCKER[@]}" run -d --name "$1" --network "$2" --read-only --tmpfs /prometheus \
		-v "$D/$1.yml:/etc/prometheus.yml:ro" "egt/prometheus:$$" prometheus \
		--config.file=/etc/prometheus.yml --storage.tsdb.path=/prometheus \
		--web.listen-address=127.0.0.1:9090 >/dev/null ||
		{ say "prometheus $1 did not start"; exit 1; }
}
# in_net CONTAINER CMD...: CMD in CONTAINER's network namespace, with the
# host's tools (curl).
in_net() {
	local pid
	pid=$("${DOCKER[@]}" inspect -f '{{.State.Pid}}' "$1")
	shift
	nsenter --net="/proc/$pid/ns/net" "$@"
}
# prom_query NAME QUERY: the one sample Prometheus NAME's HTTP API
# (/api/v1/query) answers QUERY with, or "".
prom_query() {
	in_net "$1" curl -sf --max-time 5 -G --data-urlencode "query=$2" \
		http://127.0.0.1:9090/api/v1/query | /usr/bin/python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if len(r) == 1 else "")' 2>/dev/null
}
# prom_check WHAT NAME QUERY WANT: once Prometheus scraped it (30 s).
prom_check() {
	local got
	for _ in $(seq 60); do
		got=$(prom_query "$2" "$3")
		[ "$got" = "$4" ] && break
		sleep 0.5
	done
	check "$1" "$4" "$got"
}
# prom_counts SHAPE NAME CLASS CONNECTS NAMES: Prometheus NAME answers
# the counts of the one attempt made for it: started, ended as CLASS,
# CONNECTS refused connects (no-entry, tcp), NAMES refused names.
prom_counts() {
	prom_check "Prometheus ($1): egretd is up" "$2" 'up{job="egretd"}' 1
	prom_check "Prometheus ($1): attempts started" "$2" egret_attempts_started_total 1
	prom_check "Prometheus ($1): attempts ended, $3" "$2" "egret_attempts_ended_total{class=\"$3\"}" 1
	prom_check "Prometheus ($1): connects refused (no-entry, tcp)" "$2" \
		'egret_refusals_total{reason="no-entry",protocol="tcp"}' "$4"
	prom_check "Prometheus ($1): names refused (not-allowed, dns)" "$2" \
		'egret_refusals_total{reason="not-allowed",protocol="dns"}' "$5"
	prom_check "Prometheus ($1): DNS questions denied" "$2" \
		'egret_dns_questions_total{result="denied"}' "$5"
}
# exposition_check WHAT CONTAINER ADDR:PORT: egretd's exposition there,
# read from CONTAINER's network namespace, passes promtool.
exposition_check() {
	local text
	text=$(in_net "$2" curl -sf --max-time 5 "http://$3/metrics")
	if [ -n "$text" ] && out=$(promtool check metrics <<<"$text" 2>&1) && [ -z "$out" ]; then
		ok "$1"
	else
		bad "$1" "exposition: $(head -c 300 <<<"$text")" "promtool: $out"
	fi
}
# egretd's and the miner's images from their recipes
# (tools/deploy/docker/Dockerfile.*), offline: FROM a Debian rootfs that
# mmdebstrap made of the packages they name, imported.
# The miner's base has none of egret's libraries (libbpf, libelf, libyaml,
# c-ares, zlib): its image gets egret-client, which needs libc alone.
if ! mmdebstrap --quiet --variant=minbase \
	--include=nodejs,git,npm,python3-pip,golang-go \
	bookworm "$D/base.tar" >"$D/mmdebstrap.log" 2>&1; then
	say "mmdebstrap: $(tail -3 "$D/mmdebstrap.log")"; exit 1
fi
"${DOCKER[@]}" import "$D/base.tar" "egt/base:$$" >/dev/null && rm -f "$D/base.tar"
if ! mmdebstrap --quiet --variant=minbase --include=libbpf1,libelf1,libyaml-0-2,libc-ares2,zlib1g,libsodium23 \
	bookworm "$D/base.tar" >"$D/mmdebstrap.log" 2>&1; then
	say "mmdebstrap (egretd): $(tail -3 "$D/mmdebstrap.log")"; exit 1
fi
"${DOCKER[@]}" import "$D/base.tar" "egt/base-egretd:$$" >/dev/null && rm -f "$D/base.tar"
mkdir "$D/ctx"
cp "$EGRET" "$(dirname "$EGRET")/egret-client" "$ROOT/tools/deploy/node/egret-spawn.js" \
	"$ROOT/tools/deploy/docker/miner.js" "$D/ctx/"
for name in egretd miner; do
	base=egt/base:$$
	[ "$name" = egretd ] && base=egt/base-egretd:$$
	"${DOCKER[@]}" build -q --network none --build-arg "BASE=$base" --build-arg INSTALL=0 \
		-f "$ROOT/tools/deploy/docker/Dockerfile.$name" -t "egt/$name:$$" "$D/ctx" \
		>"$D/build.log" 2>&1 || { say "docker build $name: $(tail -5 "$D/build.log")"; exit 1; }
done
"${DOCKER[@]}" network create --internal --subnet 203.0.113.0/24 "$NET" >/dev/null ||
	{ say "network create failed"; exit 1; }

# ---- the world -----------------------------------------------------------

"${DOCKER[@]}" run -d --name egt-world-a --network "$NET" --ip 203.0.113.10 \
	-v "$D/world:/log" "egt/world:$$" sh -c '
	dnsmasq --no-daemon --user=root --pid-file=/tmp/dnsmasq.pid --no-resolv --no-hosts --listen-address=203.0.113.10 \
		--bind-interfaces --log-queries --log-facility=/log/dns.log \
		--host-record=registry.npmjs.org,203.0.113.10 \
		--host-record=extra.example.com,203.0.113.10 \
		--host-record=pkgs.test,203.0.113.12 \
		--host-record=denied.example.com,203.0.113.11 &
	exec sink /log/a.log tcp:203.0.113.10:80 tcp:203.0.113.10:443' >/dev/null
"${DOCKER[@]}" run -d --name egt-world-b --network "$NET" --ip 203.0.113.11 \
	-v "$D/world:/log" "egt/world:$$" sink /log/b.log tcp:203.0.113.11:80 >/dev/null
# pkgs.test: the real-client suite's registries (an npm tarball, a PEP 503
# index, a Go module proxy), served from the base image's python3.
/usr/bin/python3 "$ROOT/tests/clients/fixtures.py" "$D/fixtures" >"$D/fixtures.log" 2>&1 ||
	{ say "fixtures.py: $(tail -3 "$D/fixtures.log")"; exit 1; }
"${DOCKER[@]}" run -d --name egt-world-pkgs --network "$NET" --ip 203.0.113.12 \
	-v "$D/fixtures/www:/www:ro" "egt/base:$$" \
	python3 -m http.server 80 --bind 203.0.113.12 --directory /www >/dev/null
for _ in $(seq 100); do
	grep -q ready "$D/world/a.log" 2>/dev/null && grep -q ready "$D/world/b.log" 2>/dev/null && break
	sleep 0.1
done
grep -q ready "$D/world/b.log" 2>/dev/null || { say "the world did not start"; exit 1; }

# ---- egretd's container ---------------------------------------------------

# The shipped file, as it is; the policy is this test's.
cp "$ROOT/tools/deploy/docker/egretd.yaml" "$D/etc-egret/egretd.yaml"
cat >"$D/etc-egret/policy.yaml" <<'POLICY'
version: 1
os_registries: []
git_remote: false
ecosystems: [npm]
repos:
  octo/app:
    hosts: ["extra.example.com:443", "pkgs.test:80"]
POLICY
chmod 644 "$D/etc-egret/"*
# egretd and the miner as tools/deploy/docker/compose.yaml runs them; the
# test's override adds only the miner's place on the test network, its
# resolver (world-a) and a directory for results.
export DOCKER_HOST="unix://$D/docker.sock" EGRETD_IMAGE="egt/egretd:$$" MINER_IMAGE="egt/miner:$$"
export EGRETD_SOCKET_DIR="$D/sock" EGRETD_CONFIG_DIR="$D/etc-egret" EGRETD_STATE_DIR="$D/state"
cat >"$D/compose.test.yaml" <<YAML
version: "3.9"
services:
  miner:
    working_dir: /work
    networks:
      test: { ipv4_address: 203.0.113.2 }
    volumes:
      - $D/resolv.conf:/etc/resolv.conf:ro
      - $D/out:/out
      - $HELPERS/probe:/usr/local/bin/probe:ro
      - $ROOT/tests/clients/agent-job.sh:/srv/agent-job.sh:ro
networks:
  test:
    external: true
    name: $NET
YAML
COMPOSE=(docker-compose -p "egt$$" -f "$ROOT/tools/deploy/docker/compose.yaml" -f "$D/compose.test.yaml")
# egretd takes connections at its socket: not just a file there (a killed
# egretd's is left, and the file comes a moment before listen()). The
# host's root, no caller of egretd's, is refused at once.
sock_ready() {
	/usr/bin/python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])' "$D/sock/egret.sock" 2>/dev/null
}
egretd_run() {
	# As docs/DEPLOYMENT.md says: the node the request lines name.
	EGRET_NODE=$(uname -n) "${COMPOSE[@]}" up -d egretd >"$D/compose.log" 2>&1 || say "compose up egretd: $(cat "$D/compose.log")"
	for _ in $(seq 300); do sock_ready && break; sleep 0.1; done
}
echo "nameserver 203.0.113.10" >"$D/resolv.conf"
egretd_run
EGRETD_C=$("${COMPOSE[@]}" ps -q egretd)
[ -S "$D/sock/egret.sock" ] || { say "egretd did not start: $("${DOCKER[@]}" logs "$EGRETD_C" 2>&1 | tail -5)"; exit 1; }
check "egretd's container has a cgroup namespace of its own (Docker's default)" private \
	"$("${DOCKER[@]}" inspect -f '{{.HostConfig.CgroupnsMode}}' "$EGRETD_C")"
# The operator's Prometheus joins compose's metrics network (its name has
# the project's prefix) and scrapes egretd there. (By address: this
# dockerd runs without iptables, which its embedded DNS needs.)
MNET=egt$$_metrics
check "compose's metrics network is internal (no route out)" true \
	"$("${DOCKER[@]}" network inspect -f '{{.Internal}}' "$MNET" 2>&1)"
EGRETD_MIP=$("${DOCKER[@]}" inspect -f "{{(index .NetworkSettings.Networks \"$MNET\").IPAddress}}" "$EGRETD_C")
prom_start egt-prom-compose "$MNET" "$EGRETD_MIP:9464"

# ---- the miner ------------------------------------------------------------

"${COMPOSE[@]}" up -d miner >"$D/compose.log" 2>&1 || { say "compose up miner: $(cat "$D/compose.log")"; exit 1; }
MINER_C=$("${COMPOSE[@]}" ps -q miner)
miner() { "${DOCKER[@]}" exec "$MINER_C" "$@" 2>&1; }

check "the miner container adds no capability" "[]" \
	"$("${DOCKER[@]}" inspect -f '{{json .HostConfig.CapAdd}}' "$MINER_C" | sed 's/null/[]/')"
check "the miner runs as uid 1000" "1000" "$(miner id -u)"
# egret-client is the one file of egret's in the miner's image, and its
# base has none of egret's libraries (every attempt below runs through it).
check "the miner's image has none of egret's own libraries (libbpf, libyaml)" "" \
	"$(miner sh -c 'ls /usr/lib/*/libbpf.so* /usr/lib/*/libyaml* 2>/dev/null')"
check "the miner's egret loads libc alone" "libc.so.6" \
	"$(miner ldd /usr/bin/egret | awk '{ print $1 }' | grep -v -e '^linux-vdso' -e 'ld-linux' | tr '\n' ' ' | sed 's/ $//')"
check_has "the miner's egret is egretd's client" "(egretd's client)" "$(miner egret --version)"
check "the miner's bounding set is Docker's default, nothing added" "00000000a80425fb" \
	"$(miner grep CapBnd /proc/self/status | awk '{ print $2 }')"
check "the miner holds no effective capability (uid 1000)" "0000000000000000" \
	"$(miner grep CapEff /proc/self/status | awk '{ print $2 }')"

# ---- metrics, through the Compose shape's Prometheus -------------------------
# One attempt with known refusals, the first this egretd runs: 3 refused
# connects, 2 refused names (one question each), COMMAND's status 3.
miner egret run -- sh -c "for i in 1 2 3; do probe tcp 203.0.113.11 80 $(tok metrics); done
	probe dns udp 203.0.113.10 nope-one.test A; probe dns udp 203.0.113.10 nope-two.test A
	exit 3" >/dev/null
check "the counted attempt's status" 3 "$?"
prom_counts Compose egt-prom-compose command_failed 3 2
exposition_check "promtool check metrics: egretd's exposition (Compose)" egt-prom-compose "$EGRETD_MIP:9464"

# ---- attempts ---------------------------------------------------------------

tok() { echo "$1-$$-$RANDOM"; }
t_npm=$(tok npm) t_extra=$(tok extra) t_deny=$(tok deny) t_own=$(tok own) t_norepo=$(tok norepo)
out=$(miner egret run --repo octo/app -- sh -c "
	echo npm: \$(probe tcp-name registry.npmjs.org 443 $t_npm 4 2>/dev/null)
	echo extra: \$(probe tcp-name extra.example.com 443 $t_extra 4 2>/dev/null)
	echo denied: \$(probe tcp 203.0.113.11 80 $t_deny 2>/dev/null)")
check_has "an ecosystem's name (npm) through egretd" "npm: ok" "$out"
check_has "the repository's extra host (octo/app)" "extra: ok" "$out"
check_has "a denied address is refused" "denied: err ECONNREFUSED" "$out"
out=$(miner egret run -- sh -c "echo extra: \$(probe tcp-name extra.example.com 443 $t_norepo 4 2>/dev/null)")
case "$out" in *"extra: ok"*) bad "octo/app's extra host without --repo is denied" "$out" ;;
	*) ok "octo/app's extra host without --repo is denied" ;; esac
check "the miner's own traffic is not restricted" ok "$(miner probe tcp 203.0.113.11 80 "$t_own" 2>/dev/null)"
grep -q "data=$t_npm" "$D/world/a.log" && ok "the npm flow reached world-a" || bad "the npm flow reached world-a" "$(cat "$D/world/a.log")"
grep -q "data=$t_extra" "$D/world/a.log" && ok "the extra host's flow reached world-a" || bad "the extra host's flow reached world-a"
grep -q "data=$t_own" "$D/world/b.log" && ok "the miner's own flow reached world-b (the barrier)" || bad "the miner's own flow reached world-b"
! grep -q "data=$t_deny" "$D/world/b.log" && ok "nothing of the denied flow reached world-b" || bad "the denied flow reached world-b"
! grep -q "data=$t_norepo" "$D/world/a.log" && ok "nothing of the other repository's flow reached world-a" || bad "the other repository's flow reached world-a"
# The denied flow's request line names the host (EGRET_NODE, as the docs
# say to export), not egretd's container, whose hostname changes with each
# recreate.
wait_line=""
for _ in $(seq 150); do
	wait_line=$("${DOCKER[@]}" logs "$EGRETD_C" 2>/dev/null | grep -m1 '"egret":"request"')
	[ -n "$wait_line" ] && break
	sleep 0.1
done
check_has "egretd's request lines name the host as their node" "\"node\":\"$(uname -n)\"" "$wait_line"

# The worktree, as the miner makes it on /work (the compose file's tmpfs):
# a clone and a `git worktree add`. The agent does its whole job there
# (tests/clients/agent-job.sh: npm install and npm ci, pip install --user,
# go build with a module from a proxy, an edit and a commit), as their
# owner, in a HOME of its own; on disk all of it is the miner's, which
# then modifies, commits, gcs and deletes the whole tree.
out=$(miner sh -c 'set -e; cd /work; git init -q origin; cd origin; echo a >README; git add README
	git -c user.name=m -c user.email=m@x commit -qm init; cd ..; git clone -q origin repo
	git -C repo worktree add -q ../wt; echo made')
check_has "the miner makes a clone and a worktree on /work" made "$out"
for d in repo wt; do
	out=$(miner sh -c "cd /work/$d && egret run --repo octo/app -- sh -c \"\$(cat /srv/agent-job.sh)\"")
	check_has "the agent's HOME is fresh ($d)" "home: fresh" "$out"
	check_has "npm install, then npm ci, in the miner's $d" "npm: egret-hello-npm" "$out"
	check_has "pip install --user in the miner's $d" "pip: egret-hello-wheel" "$out"
	check_has "go build with a module in the miner's $d" "go: egret-hello-go" "$out"
	check_has "the agent commits everything in the miner's $d" "uncommitted: 0" "$out"
	check "the agent's file is the miner's on disk ($d)" 1000 "$(miner stat -c %u "/work/$d/src/deep/file")"
	check "what npm installed is the miner's on disk ($d)" 1000 \
		"$(miner stat -c %u "/work/$d/node_modules/egret-hello/index.js")"
done
out=$(miner sh -c 'set -e; cd /work/repo; echo m >>src/deep/file; git -c user.name=m -c user.email=m@x commit -qam miner
	git gc -q; cd /; rm -rf /work/origin /work/repo /work/wt; echo gone')
check_has "the miner modifies, commits, gcs and deletes the whole tree" gone "$out"

# The example miner itself: Node's spawn of `egret run --repo R -- AGENT`
# (tools/deploy/node/egret-spawn.js), in its image, as its user.
t_node=$(tok node)
out=$(echo "octo/app probe tcp-name registry.npmjs.org 443 $t_node 4" |
	"${DOCKER[@]}" exec -i "$MINER_C" node /srv/miner/miner.js 2>&1)
check_has "the example miner (Node) starts an attempt through egret run" "attempt octo/app: exit 0" "$out"
check_has "its agent's stdout, inherited by Node" "ok" "$out"
grep -q "data=$t_node" "$D/world/a.log" && ok "the Node-started attempt's flow reached world-a" ||
	bad "the Node-started attempt's flow reached world-a"

# ---- review from where the operator stands ---------------------------------
# One command each, in egretd's container as compose runs it: the
# attempts (egret status), the requests (list), an approval (approve),
# with egret's defaults; the next attempt of the repository has it.
t_rev=$(tok review) t_rev2=$(tok review2)
# (Bounded, and waited for: a killed docker exec leaves its process
# running. It lives until the status was read: /out/rev.go.)
rm -f "$D/out/rev.go"
miner egret run --repo octo/app -- sh -c "probe tcp-name denied.example.com 80 $t_rev 4
	i=0; while [ ! -e /out/rev.go ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done" >/dev/null &
rev_pid=$!
for _ in $(seq 150); do
	st=$("${COMPOSE[@]}" exec -T egretd egret status 2>&1)
	case $st in *live*) break ;; esac
	sleep 0.2
done
check_has "docker-compose exec egretd egret status: the live attempt" "live" "$st"
check_has "... with its repository" "repo octo/app" "$st"
touch "$D/out/rev.go"
wait "$rev_pid" 2>/dev/null
for _ in $(seq 150); do
	rid=$("${COMPOSE[@]}" exec -T egretd egret requests list --json 2>/dev/null | /usr/bin/python3 -c '
import json, sys
for r in json.load(sys.stdin)["requests"]:
    if r["repo"] == "octo/app" and r["target"] == "denied.example.com": print(r["id"])')
	[ -n "$rid" ] && break
	sleep 0.2
done
[ -n "$rid" ] && ok "docker-compose exec egretd egret requests list: the denied name's request" ||
	bad "docker-compose exec egretd egret requests list: the denied name's request" \
		"$("${COMPOSE[@]}" exec -T egretd egret requests list 2>&1)"
out=$("${COMPOSE[@]}" exec -T egretd egret requests approve "$rid" --ports 80 2>&1)
check_has "docker-compose exec egretd egret requests approve ID" "approved" "$out"
out=$(miner egret run --repo octo/app -- sh -c "echo review: \$(probe tcp-name denied.example.com 80 $t_rev2 4 2>/dev/null)")
check_has "the next attempt of octo/app reaches the approved name" "review: ok" "$out"
grep -q "data=$t_rev2" "$D/world/b.log" && ok "the approved name's flow arrived" ||
	bad "the approved name's flow arrived"
! grep -q "data=$t_rev " "$D/world/b.log" && ok "nothing of the flow before the approval arrived" ||
	bad "the flow before the approval arrived"

# ---- COMMAND's orphans, killed at the attempt's end -------------------------
# COMMAND leaves a child behind; the teardown kills it, and it becomes a
# zombie of whoever reaps orphans in the miner's PID namespace: its init.
# compose.yaml gives the miner one that reaps (init: true, docker-init);
# a miner container whose pid 1 does not reap keeps them (the control:
# docs/DEPLOYMENT.md says why egret cannot reap them itself).
zombies() {
	"${DOCKER[@]}" exec "$1" sh -c 'cat /proc/[0-9]*/stat 2>/dev/null' |
		awk '{ sub(/.*\) /, ""); if ($1 == "Z") n++ } END { print n + 0 }'
}
for _ in 1 2 3; do miner egret run -- sh -c 'sleep 300 & exit 0' >/dev/null; done
check "the miner's pid 1 is docker-init (compose: init: true)" docker-init "$(miner cat /proc/1/comm)"
# docker-init reaps them as it gets to it: up to 10 s.
for _ in $(seq 50); do n=$(zombies "$MINER_C"); [ "$n" = 0 ] && break; sleep 0.2; done
check "zombies in the miner's container after attempts that left children" 0 "$n"
"${DOCKER[@]}" run -d --name egt-noinit --user 1000:1000 --network none -w /work \
	--tmpfs /work:uid=1000,gid=1000,mode=0755,exec -v "$D/sock:/run/egretd:ro" \
	"egt/miner:$$" sleep 100000 >/dev/null
for _ in 1 2 3; do "${DOCKER[@]}" exec egt-noinit egret run -- sh -c 'sleep 300 & exit 0' >/dev/null 2>&1; done
n=$(zombies egt-noinit)
[ "$n" -ge 1 ] && ok "control: a miner whose pid 1 does not reap keeps them ($n)" ||
	bad "control: a miner whose pid 1 does not reap keeps them" "$n"
"${DOCKER[@]}" rm -f egt-noinit >/dev/null

# ---- egretd's container killed mid-attempt -----------------------------------

t_k=$(tok killed) t_kname=$(tok kname) t_after=$(tok after)
rm -f "$D/out/"*
# COMMAND writes only beneath its own places (its worktree, /work here:
# docs/SECURITY.md), and reads the test's signals in /out.
miner sh -c 'rm -rf /work/k && mkdir /work/k'
"${DOCKER[@]}" exec -d "$MINER_C" sh -c "cd /work/k && egret run --repo octo/app -- sh -c '
	touch started
	i=0; while [ ! -e /out/down ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
	echo denied: \$(probe tcp 203.0.113.11 80 $t_k 2>/dev/null) >down.txt
	echo name: \$(probe tcp-name registry.npmjs.org 443 $t_kname 4 2>/dev/null) >>down.txt
	touch down.done
	i=0; while [ ! -e /out/up ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
	i=0; while [ \$i -lt 50 ]; do r=\$(probe tcp-name registry.npmjs.org 443 $t_after 4 2>/dev/null) && break; sleep 0.2; i=\$((i + 1)); done
	echo name: \$r >up.txt
	exit 3'; echo \$? >/out/rc" >/dev/null
for _ in $(seq 100); do miner test -e /work/k/started && break; sleep 0.1; done
"${DOCKER[@]}" kill "$EGRETD_C" >/dev/null
touch "$D/out/down"
for _ in $(seq 150); do miner test -e /work/k/down.done && break; sleep 0.1; done
check_has "with egretd's container killed, a denied address stays refused" \
	"denied: err ECONNREFUSED" "$(miner cat /work/k/down.txt 2>/dev/null)"
case "$(miner cat /work/k/down.txt 2>/dev/null)" in
*"name: ok"*) bad "with egretd's container killed, DNS fails closed" "$(miner cat /work/k/down.txt)" ;;
*) ok "with egretd's container killed, DNS fails closed" ;;
esac
egretd_run
touch "$D/out/up"
for _ in $(seq 600); do [ -e "$D/out/rc" ] && break; sleep 0.1; done
check "the attempt's status through the restarted egretd's container" 3 "$(cat "$D/out/rc" 2>/dev/null)"
check_has "a name after re-adoption" "name: ok" "$(miner cat /work/k/up.txt 2>/dev/null)"
miner probe tcp 203.0.113.11 80 "$(tok barrier)" >/dev/null
! grep -q "data=$t_k" "$D/world/b.log" && ok "nothing reached world-b while egretd was down" ||
	bad "something reached world-b while egretd was down"
! grep -q "data=$t_kname" "$D/world/a.log" && ok "no flow to the allowed name while DNS was down" ||
	bad "a flow to the allowed name while DNS was down"
grep -q "data=$t_after" "$D/world/a.log" && ok "the allowed name's flow after re-adoption arrived" ||
	bad "the allowed name's flow after re-adoption arrived"
left=$(ls "$D/state/run-egret" 2>/dev/null)
check "attempt records left" "" "$left"

# ---- the Kubernetes DaemonSet's container settings, with Docker --------------
# tools/deploy/kubernetes/egretd-daemonset.yaml as Docker can run it: the
# host's PID and cgroup namespaces, a read-only root, no privilege
# escalation, its hostPath mounts (one state directory, by subPath), and
# its ConfigMap's files in the layout the kubelet gives them (symlinks
# through ..data). Only the callers' cgroup prefix is Docker's here, not
# the kubelet's, and BPF and PERFMON are left to SYS_ADMIN (Docker 20.10).
"${COMPOSE[@]}" rm -sf egretd >/dev/null 2>&1
rm -f "$D/sock/egret.sock"
# The DaemonSet's capabilities, as Docker 20.10 takes them.
EGRETD_CAPS=()
for c in $(/usr/bin/python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "DaemonSet":
        for c in d["spec"]["template"]["spec"]["containers"][0]["securityContext"]["capabilities"]["add"]:
            print(c)' "$ROOT/tools/deploy/kubernetes/egretd-daemonset.yaml"); do
	case $c in BPF | PERFMON) continue ;; esac
	EGRETD_CAPS+=(--cap-add "$c")
done
K8S=$ROOT/tools/deploy/kubernetes
cm="$D/configmap" ts="..2026_12_01_00_00_00.0"
mkdir -p "$cm/$ts"
for key in egretd.yaml policy.yaml; do
	/usr/bin/python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "ConfigMap": sys.stdout.write(d["data"][sys.argv[2]])' \
		"$K8S/egretd-config.yaml" "$key" | sed 's|cgroup: /kubepods$|cgroup: /docker|' >"$cm/$ts/$key"
	chmod 444 "$cm/$ts/$key"
	ln -s "..data/$key" "$cm/$key"
done
ln -s "$ts" "$cm/..data"
chmod 755 "$cm" "$cm/$ts"
# The pod's network: one of the test's own, internal, where the
# DaemonSet's metrics port is scraped at the pod's address.
PODNET=egt-pods-$$
"${DOCKER[@]}" network create --internal --subnet 198.18.44.0/24 "$PODNET" >/dev/null ||
	{ say "network create $PODNET failed"; exit 1; }
"${DOCKER[@]}" run -d --name egt-daemonset --pid host --cgroupns host --network "$PODNET" \
	--read-only --security-opt no-new-privileges --security-opt seccomp=unconfined \
	--cap-drop ALL "${EGRETD_CAPS[@]}" \
	-v /sys/fs/cgroup:/sys/fs/cgroup -v /sys/fs/bpf:/sys/fs/bpf -v "$D/sock:/run/egretd" \
	-v "$cm:/etc/egret:ro" \
	-v "$D/state/run-egret:/run/egret" -v "$D/state/uids:/run/egret-uids" \
	-v "$D/state/attempts:/run/egretd-attempts" -v "$D/state/lib:/var/lib/egret" \
	"egt/egretd:$$" egretd >/dev/null
# (Its "listening" line is -v's: egretd logs warnings and up by default.)
for _ in $(seq 300); do sock_ready && break; sleep 0.1; done
sock_ready || { say "the DaemonSet's egretd did not listen: $("${DOCKER[@]}" logs egt-daemonset 2>&1 | tail -5)"; exit 1; }
# Prometheus scrapes the pod's address at the port the manifest names
# "metrics" (and its prometheus.io/port annotation says).
DS_PORT=$(/usr/bin/python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d.get("kind") == "DaemonSet":
        t = d["spec"]["template"]
        p = [p["containerPort"] for p in t["spec"]["containers"][0]["ports"] if p["name"] == "metrics"]
        a = t["metadata"]["annotations"]
        print(p[0] if a.get("prometheus.io/scrape") == "true" and str(p[0]) == a.get("prometheus.io/port") else "")' \
	"$ROOT/tools/deploy/kubernetes/egretd-daemonset.yaml")
check "the DaemonSet's metrics port, named and annotated" 9464 "$DS_PORT"
DS_IP=$("${DOCKER[@]}" inspect -f "{{(index .NetworkSettings.Networks \"$PODNET\").IPAddress}}" egt-daemonset)
prom_start egt-prom-ds "$PODNET" "$DS_IP:$DS_PORT"
miner egret run -- sh -c "for i in 1 2; do probe tcp 203.0.113.11 80 $(tok dsmetrics); done
	probe dns udp 203.0.113.10 nope-ds.test A; exit 0" >/dev/null
check "the DaemonSet's counted attempt's status" 0 "$?"
prom_counts DaemonSet egt-prom-ds ok 2 1
exposition_check "promtool check metrics: egretd's exposition (DaemonSet)" egt-prom-ds "$DS_IP:$DS_PORT"
t_ds=$(tok ds) t_dsdeny=$(tok dsdeny)
out=$(miner egret run -- sh -c "
	echo npm: \$(probe tcp-name registry.npmjs.org 443 $t_ds 4 2>/dev/null)
	echo denied: \$(probe tcp 203.0.113.11 80 $t_dsdeny 2>/dev/null)")
check_has "the DaemonSet's egretd: its ConfigMap's policy allows npm" "npm: ok" "$out"
check_has "the DaemonSet's egretd: a denied address is refused" "denied: err ECONNREFUSED" "$out"
check "the DaemonSet's egretd: its root file system is read-only" true \
	"$("${DOCKER[@]}" inspect -f '{{.HostConfig.ReadonlyRootfs}}' egt-daemonset)"
miner probe tcp 203.0.113.11 80 "$(tok barrier)" >/dev/null
grep -q "data=$t_ds" "$D/world/a.log" && ok "the DaemonSet's egretd: the npm flow arrived" ||
	bad "the DaemonSet's egretd: the npm flow arrived" "$("${DOCKER[@]}" logs egt-daemonset 2>&1 | tail -3)"
! grep -q "data=$t_dsdeny" "$D/world/b.log" && ok "the DaemonSet's egretd: nothing of the denied flow arrived" ||
	bad "the DaemonSet's egretd: the denied flow arrived"
# Review as docs/DEPLOYMENT.md ("Kubernetes") says: `kubectl exec` into
# the node's egretd pod for status and requests (here docker exec into
# the same container), and the approval made in a checkout of the
# configuration repository, from the store's hostPath.
rm -f "$D/out/dsrev.go"
miner egret run --repo octo/ds -- sh -c "probe tcp 203.0.113.11 80 $(tok dsrev) >/dev/null 2>&1
	i=0; while [ ! -e /out/dsrev.go ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done" >/dev/null &
rev_pid=$!
for _ in $(seq 150); do
	st=$("${DOCKER[@]}" exec egt-daemonset egret status 2>&1)
	case $st in *"repo octo/ds"*) break ;; esac
	sleep 0.2
done
check_has "kubectl exec ds/egretd -- egret status: the live attempt" "repo octo/ds" "$st"
touch "$D/out/dsrev.go"
wait "$rev_pid" 2>/dev/null
for _ in $(seq 150); do
	out=$("${DOCKER[@]}" exec egt-daemonset egret requests list 2>&1)
	case $out in *203.0.113.11*) break ;; esac
	sleep 0.2
done
check_has "kubectl exec ds/egretd -- egret requests list: the refused address" "203.0.113.11" "$out"
rid=$(awk '/octo\/ds/ && /203.0.113.11/ { print $1; exit }' <<<"$out")
mkdir -m 755 "$D/checkout" && cp "$cm/$ts/policy.yaml" "$D/checkout/policy.yaml"
out=$("$EGRET" requests approve "$rid" --state-dir "$D/state/lib" --policy "$D/checkout/policy.yaml" 2>&1)
check_has "egret requests approve ID --policy CHECKOUT/policy.yaml" "approved request" "$out"
check_has "the approval, in the checkout's approved.d for the ConfigMap" "203.0.113.11" \
	"$(cat "$D/checkout/approved.d/"* 2>/dev/null)"

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
