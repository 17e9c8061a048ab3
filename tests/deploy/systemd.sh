#!/bin/bash
# tests/deploy/systemd.sh - egretd.socket, egretd.service and the example
# miner.service in a booted systemd (docs/DEPLOYMENT.md, "systemd").
#
# A Debian rootfs from mmdebstrap, egret installed into it by `make install
# DESTDIR=`, booted with systemd-nspawn (a network namespace of its own
# with loopback only; no machined, so --keep-unit). Inside, the miner
# service (User=miner, the socket's group, Delegate=yes) runs one attempt
# through the socket-activated egretd; a root unit ordered after it writes
# what systemd says of the units, then powers the container off.
#
# Asserted: egretd was started by its socket, as root under the unit's
# capability set, and served the unprivileged miner; COMMAND ran as a uid
# of attempts.uids, in a cgroup under miner.service (its delegated
# subtree); the policy's address got through the programs (ENETUNREACH:
# allowed, no route) and another was refused (ECONNREFUSED); nothing of
# the attempt was left when the miner's unit ended. Root only.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /var/tmp/egret-systemd.XXXXXX)
R=$W/root
PASSED=0 FAILED=0
ok() { echo "ok    $1"; PASSED=$((PASSED + 1)); }
bad() { echo "FAIL  $1"; shift; for l in "$@"; do echo "        $l"; done; FAILED=$((FAILED + 1)); }
check_has() {	# WHAT NEEDLE HAYSTACK
	case "$3" in *"$2"*) ok "$1" ;; *) bad "$1" "want '$2' in" "$3" ;; esac
}
# nspawn --keep-unit splits our cgroup into supervisor/ and payload/ and
# leaves them: removed with the rest.
cleanup() {
	local cg2 self
	kill "${NSPAWN_PID:-}" 2>/dev/null
	wait "${NSPAWN_PID:-}" 2>/dev/null
	cg2=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' /proc/self/mountinfo)
	self=$(sed -n 's/^0:://p' /proc/self/cgroup)
	[ "$self" = / ] && self=
	for d in "$cg2$self/payload" "$cg2$self/supervisor"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	umount "$W/bpffs" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

if ! command -v mmdebstrap >/dev/null || ! command -v systemd-nspawn >/dev/null; then
	if [ "${CI:-}" = true ]; then
		echo "FAIL  systemd.sh: no mmdebstrap or systemd-nspawn (CI=true: tools/install-deps.sh deploy installs them)"
		exit 1
	fi
	echo "SKIP: tests/deploy/systemd.sh needs mmdebstrap and systemd-container (sudo tools/install-deps.sh deploy)"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "systemd.sh: root only"; exit 1; }

# Debian's own packages, from the apt sources this machine uses.
if ! mmdebstrap --quiet --variant=minbase \
	--include=systemd,systemd-sysv,dbus,libbpf1,libyaml-0-2,libc-ares2,libelf1,zlib1g,libsodium23 \
	bookworm "$R" >"$W/mmdebstrap.log" 2>&1; then
	echo "FAIL  systemd.sh: mmdebstrap: $(tail -3 "$W/mmdebstrap.log")"
	exit 1
fi
make -s -C "$ROOT" --no-print-directory install DESTDIR="$R" PREFIX=/usr >"$W/install.log" 2>&1 ||
	{ echo "FAIL  systemd.sh: make install: $(cat "$W/install.log")"; exit 1; }
install -m 755 "$ROOT/build/helpers/probe" "$R/usr/local/bin/probe"

groupadd --root "$R" egret
useradd --root "$R" -u 1000 -U -G egret -m -d /srv/miner -s /bin/sh miner
install -d -m 755 "$R/etc/egret"
# The example as make install ships it, unchanged; the policy is this test's.
cp "$R/etc/egret/egretd.yaml.example" "$R/etc/egret/egretd.yaml"
cat >"$R/etc/egret/policy.yaml" <<'POLICY'
version: 1
os_registries: []
git_remote: false
repos:
  octo/app:
    cidrs: ["203.0.113.10:80"]
POLICY
chmod 644 "$R/etc/egret/"*.yaml
cat >"$R/srv/miner/miner.sh" <<'SH'
#!/bin/sh
# One attempt, as the miner starts its agent.
egret run --repo octo/app -- sh -c '
	echo "uid: $(id -u)"
	echo "cgroup: $(grep ^0:: /proc/self/cgroup)"
	echo "allowed: $(probe tcp 203.0.113.10 80 hello 2>/dev/null)"
	echo "denied: $(probe tcp 203.0.113.11 80 hello 2>/dev/null)"
	exit 3' >/srv/miner/result 2>/srv/miner/result.err
echo "status: $?" >>/srv/miner/result
SH
chmod 755 "$R/srv/miner/miner.sh"
chown -R 1000:1000 "$R/srv/miner"
# The example unit, as shipped, with this test's ExecStart; a oneshot, so
# that the check below runs after it.
sed -e 's|^ExecStart=.*|ExecStart=/srv/miner/miner.sh|' -e 's|^\[Service\]|[Service]\nType=oneshot|' \
	"$R/usr/share/doc/egret/examples/miner.service" >"$R/etc/systemd/system/miner.service"
# The review, as root on the host with egret's defaults: the store in
# /var/lib/egret, the approvals next to /etc/egret/policy.yaml.
cat >"$R/srv/review.sh" <<'SH'
#!/bin/sh
egret requests list >/srv/requests 2>&1
id=$(egret requests list 2>/dev/null | awk 'NR == 2 { print $1 }')
egret requests approve "$id" >>/srv/requests 2>&1
cat /etc/egret/approved.d/* >>/srv/requests 2>&1
SH
chmod 755 "$R/srv/review.sh"
cat >"$R/etc/systemd/system/egret-check.service" <<'UNIT'
[Unit]
Description=what systemd says of egretd and the miner, then power off
After=miner.service
Requires=miner.service

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'systemctl show egretd.service -p ActiveState -p TriggeredBy -p MainPID > /srv/check; \
	cat /proc/$(systemctl show egretd.service -p MainPID --value)/status | grep -E "^(Uid|CapEff)" >> /srv/check; \
	echo "miner cgroups left: $(find /sys/fs/cgroup/system.slice/miner.service -mindepth 1 -type d | wc -l)" >> /srv/check; \
	journalctl -u egretd.service -u egretd.socket --no-pager -q > /srv/journal 2>&1'
ExecStart=/srv/review.sh
ExecStartPost=/bin/systemctl --no-block poweroff
UNIT
mkdir -p "$R/etc/systemd/system/sockets.target.wants"
ln -s /usr/lib/systemd/system/egretd.socket "$R/etc/systemd/system/sockets.target.wants/egretd.socket"
mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
ln -s /etc/systemd/system/miner.service "$R/etc/systemd/system/multi-user.target.wants/miner.service"
ln -s /etc/systemd/system/egret-check.service "$R/etc/systemd/system/multi-user.target.wants/egret-check.service"
# No console logins; a unified cgroup hierarchy in the container.
ln -sf /dev/null "$R/etc/systemd/system/console-getty.service"

# The container's own bpffs (nspawn's /sys has none), and the system calls
# egretd and egret's launcher make that nspawn's own filter refuses.
mkdir "$W/bpffs" && mount -t bpf bpf "$W/bpffs"
SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn -D "$R" --boot --private-network \
	--register=no --keep-unit --console=passive --bind="$W/bpffs:/sys/fs/bpf" \
	--capability=CAP_BPF,CAP_PERFMON,CAP_NET_ADMIN \
	--system-call-filter='bpf perf_event_open landlock_create_ruleset landlock_add_rule landlock_restrict_self' \
	>"$W/nspawn.log" 2>&1 &
NSPAWN_PID=$!
for _ in $(seq 900); do kill -0 "$NSPAWN_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$NSPAWN_PID" 2>/dev/null; then
	bad "the container powered itself off within 90 s" "$(tail -5 "$W/nspawn.log")"
fi
result=$(cat "$R/srv/miner/result" "$R/srv/miner/result.err" 2>/dev/null)
check=$(cat "$R/srv/check" 2>/dev/null)
check_has "egretd.service was started by egretd.socket" "TriggeredBy=egretd.socket" "$check"
check_has "egretd.service was running" "ActiveState=active" "$check"
check_has "egretd runs as root" "Uid:	0	0	0	0" "$check"
check_has "the attempt's exit status reached the miner" "status: 3" "$result"
uid=$(sed -n 's/^uid: //p' <<<"$result")
if [ -n "$uid" ] && [ "$uid" -ge 200000 ] && [ "$uid" -le 200999 ]; then
	ok "COMMAND ran as a uid of attempts.uids ($uid)"
else
	bad "COMMAND ran as a uid of attempts.uids" "$result"
fi
check_has "COMMAND's cgroup is under miner.service (its delegated subtree)" \
	"cgroup: 0::/system.slice/miner.service/" "$result"
check_has "the policy's address got through the programs (allowed; no route here)" \
	"allowed: err ENETUNREACH" "$result"
check_has "another address was refused" "denied: err ECONNREFUSED" "$result"
check_has "nothing of the attempt left under miner.service" "miner cgroups left: 0" "$check"
review=$(cat "$R/srv/requests" 2>/dev/null)
check_has "egret requests list (root, defaults): the refused address" "203.0.113.11" "$review"
check_has "egret requests approve ID (root, defaults)" "approved request" "$review"
check_has "the approval is in /etc/egret/approved.d" "203.0.113.11" "$(cat "$R"/etc/egret/approved.d/* 2>/dev/null)"
[ "$FAILED" = 0 ] || echo "        journal: $(tail -5 "$R/srv/journal" 2>/dev/null)"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
