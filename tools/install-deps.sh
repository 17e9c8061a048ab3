#!/usr/bin/env bash
# Install every Debian package egret needs to build, test and demo.
# Idempotent: prints nothing and touches nothing when all are present.
#   tools/install-deps.sh          build, test, demo (and the agent CLIs
#                                  tests/agents drives, from the npm registry)
#   tools/install-deps.sh bench    plus what `make bench` compares against
#   tools/install-deps.sh stress   plus stress-ng, for `make stress`
#   tools/install-deps.sh deploy   plus Docker, for tests/deploy/docker.sh (CI
#                                  installs it; on a host of your own it is
#                                  yours to choose: its package starts a
#                                  system dockerd where systemd runs)
set -euo pipefail

packages=(
	# build
	make gcc clang llvm pkg-config bpftool
	libbpf-dev libelf-dev zlib1g-dev libyaml-dev libc-ares-dev libsodium-dev
	# tests (tmux: a real terminal for the terminal tests; iptables: the
	# red-team world delays a handshake; openssl: the clients' test CA;
	# bubblewrap: an agent's own sandbox nested in an attempt)
	libcmocka-dev iproute2 util-linux procps curl dnsmasq-base bind9-dnsutils jq
	tmux iptables openssl bubblewrap
	# make fuzz: libFuzzer runtime for clang 14
	libclang-rt-14-dev
	# the real-client suite (tests/clients): the clients, and what its
	# servers need (git http-backend and daemon, an apt repository)
	wget git python3 python3-pip golang-go bind9-host dpkg-dev apt
	# make install-check: man pages rendered, units verified
	man-db groff-base systemd
)
# Node.js may come from elsewhere than Debian (NodeSource ships npm inside
# its nodejs): ask for Debian's only when the command is missing.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
# make bench: the iptables/ipset and HTTP-proxy baselines, its report;
# what sandbox-runtime (installed by the bench from npm) runs on.
if [ "${1:-}" = bench ]; then
	packages+=(iptables ipset tinyproxy python3 bubblewrap socat ripgrep)
fi
# make stress: the CPU load beside egretd's tests.
if [ "${1:-}" = stress ]; then
	packages+=(stress-ng)
fi
# The deployment tests: Debian's Docker engine (the test starts a dockerd
# of its own, never the packaged service) and Compose; the Kubernetes
# API's models, to validate the manifests offline; a Debian rootfs and
# systemd-nspawn, to boot the systemd units; Prometheus and promtool, to
# scrape egretd's metrics (the test runs its own, never the packaged
# service: masked below).
if [ "${1:-}" = deploy ]; then
	packages+=(docker.io docker-compose python3-kubernetes python3-yaml
		mmdebstrap systemd-container prometheus)
fi

# The user tests and the demo run COMMAND as: one of their own, never a
# uid a daemon shares (nobody is dnsmasq's), or egret refuses to start it;
# with a home of its own, as a real user has (tools keep caches there).
test_user=${EGRET_TEST_USER:-egret-test}
test_home=/var/lib/$test_user

# The agent CLIs of tests/agents (tests/agents/versions: NAME PACKAGE
# VERSION COMMAND), each exactly that version, into a directory of its
# own under /opt/egret-agents that only egret's tests use: never npm's
# global prefix or another user's cache.
agents_dir=${AGENTS_DIR:-/opt/egret-agents}
agents_file=$(dirname "$0")/../tests/agents/versions
agents_missing=()
while read -r name pkg version bin; do
	[ -x "$agents_dir/$name@$version/node_modules/.bin/$bin" ] ||
		agents_missing+=("$name $pkg $version $bin")
done < <(grep -v '^#' "$agents_file" 2>/dev/null)

install_agents() {
	local a name pkg version bin dir
	for a in "${agents_missing[@]}"; do
		read -r name pkg version bin <<<"$a"
		dir=$agents_dir/$name@$version
		echo "install-deps: installing $pkg@$version into $dir"
		# Made aside and renamed: a failed install leaves no directory
		# that looks installed.
		if ! { rm -rf "$dir.new" && mkdir -p "$dir.new" &&
			(umask 022 && npm install --prefix "$dir.new" --cache "$agents_dir/.npm-cache" \
				--no-audit --no-fund --loglevel=error "$pkg@$version" >/dev/null) &&
			"$dir.new/node_modules/.bin/$bin" --version >/dev/null; }; then
			echo "install-deps: $pkg@$version did not install" >&2
			return 1
		fi
		rm -rf "$dir" && mv "$dir.new" "$dir" || return 1
	done
	rm -rf "$agents_dir/.npm-cache"
}

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done
home_ok() {
	[ "$(getent passwd "$test_user" | cut -d: -f6)" = "$test_home" ] &&
		[ "$(stat -c %U "$test_home" 2>/dev/null)" = "$test_user" ]
}
id "$test_user" >/dev/null 2>&1 && home_ok && [ ${#missing[@]} -eq 0 ] &&
	[ ${#agents_missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages (${missing[*]}), agent CLIs (${#agents_missing[@]}) or user $test_user; run as root: sudo $0" >&2
	exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's prometheus package enables (and, where systemd runs, starts) a
# system Prometheus on :9090 that scrapes localhost: the tests start their
# own, so the packaged one is stopped and masked, never left running.
if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null; then
	systemctl stop prometheus.service >/dev/null 2>&1 || true
	systemctl disable prometheus.service >/dev/null 2>&1 || true
	systemctl mask prometheus.service >/dev/null 2>&1 || true
fi
if ! id "$test_user" >/dev/null 2>&1; then
	echo "install-deps: adding user $test_user (COMMAND's user in tests and the demo)"
	useradd --system --user-group --no-create-home --home-dir "$test_home" \
		--shell /usr/sbin/nologin "$test_user"
fi
if ! home_ok; then
	usermod --home "$test_home" "$test_user"
	install -d -m 0700 -o "$test_user" -g "$test_user" "$test_home"
fi
install_agents
