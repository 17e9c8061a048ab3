#!/bin/bash
# install-check.sh - `make install` into an empty directory gives exactly
# the tree docs/DEPLOYMENT.md ("Install") describes, every man page renders
# without a warning, the units verify, egretd runs by its link's name, and
# `make uninstall` leaves nothing. Usage: tools/install-check.sh OUT
set -u
OUT=${1:-build}
D=$(mktemp -d /tmp/egret-install.XXXXXX)
trap 'rm -rf "$D" "$D.units"' EXIT
fail() { echo "FAIL  install-check: $*"; exit 1; }

make -s --no-print-directory OUT="$OUT" install DESTDIR="$D" PREFIX=/usr >"$D.log" 2>&1 ||
	fail "make install: $(cat "$D.log")"
rm -f "$D.log"
want='etc/egret/egretd.yaml.example
etc/egret/policy.yaml.example
usr/bin/egret
usr/bin/egret-client
usr/lib/systemd/system/egretd.service
usr/lib/systemd/system/egretd.socket
usr/sbin/egretd
usr/share/doc/egret/ARCHITECTURE.md
usr/share/doc/egret/BENCHMARKS.md
usr/share/doc/egret/CLIENTS.md
usr/share/doc/egret/DEPLOYMENT.md
usr/share/doc/egret/EGRETD.md
usr/share/doc/egret/EVENTS.md
usr/share/doc/egret/POLICY.md
usr/share/doc/egret/README.md
usr/share/doc/egret/SECURITY.md
usr/share/doc/egret/WIRE.md
usr/share/doc/egret/examples/egretd.yaml
usr/share/doc/egret/examples/miner.service
usr/share/doc/egret/examples/policy.yaml
usr/share/man/man1/egret.1
usr/share/man/man5/egret-policy.5
usr/share/man/man8/egretd.8'
got=$(cd "$D" && find . -type f -o -type l | sed 's|^\./||' | sort)
# docs/ may hold more pages than this list: each must be installed, and
# nothing else may be.
extra=$(comm -13 <(echo "$want" | sort) <(echo "$got") | grep -v '^usr/share/doc/egret/[A-Z]*\.md$')
missing=$(comm -23 <(echo "$want" | sort) <(echo "$got"))
[ -z "$missing" ] || fail "not installed: $missing"
[ -z "$extra" ] || fail "installed beyond the documented tree: $extra"
for f in docs/*.md; do
	[ -f "$D/usr/share/doc/egret/$(basename "$f")" ] || fail "doc $f not installed"
done
[ "$(readlink "$D/usr/sbin/egretd")" = ../bin/egret ] ||
	fail "usr/sbin/egretd: want a link to ../bin/egret, got '$(readlink "$D/usr/sbin/egretd")'"
"$D/usr/sbin/egretd" --help 2>&1 | grep -q '^Usage: egretd' ||
	fail "the installed egretd does not run as egretd"
[ "$(stat -c %a "$D/usr/bin/egret")" = 755 ] || fail "usr/bin/egret is not 0755"
# egretd's client loads libc and nothing else: a caller's image needs no
# library of egret's (docs/DEPLOYMENT.md).
libs=$(ldd "$D/usr/bin/egret-client" | awk '{ print $1 }' | grep -v -e '^linux-vdso' -e '^libc\.so' -e 'ld-linux' | tr '\n' ' ')
[ -z "$libs" ] || fail "usr/bin/egret-client loads more than libc: $libs"
"$D/usr/bin/egret-client" run --via "$D/no.sock" -- true 2>"$D.err"
[ $? = 125 ] && grep -q "connect to egretd at $D/no.sock" "$D.err" ||
	fail "egret-client run without egretd: want 125 and one line, got: $(cat "$D.err")"
rm -f "$D.err"
grep -q '^ExecStart=/usr/sbin/egretd$' "$D/usr/lib/systemd/system/egretd.service" ||
	fail "egretd.service does not start /usr/sbin/egretd"
for m in "$D"/usr/share/man/man*/*; do
	w=$(MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
	[ -z "$w" ] || fail "man -l $(basename "$m"): $w"
	MANWIDTH=80 man -l "$m" 2>/dev/null | grep -q NAME || fail "man -l $(basename "$m") renders no NAME"
done
# The units as installed, but pointing at the installed binary (the host's
# /usr/sbin has none): systemd-analyze checks every directive and that
# ExecStart= is an executable.
mkdir "$D.units"
sed "s|=/usr/sbin/egretd|=$D/usr/sbin/egretd|" "$D/usr/lib/systemd/system/egretd.service" \
	>"$D.units/egretd.service"
cp "$D/usr/lib/systemd/system/egretd.socket" "$D.units/"
w=$(systemd-analyze verify --man=no "$D.units/egretd.socket" "$D.units/egretd.service" 2>&1)
rm -rf "$D.units"
[ -z "$w" ] || fail "systemd-analyze verify: $w"
make -s --no-print-directory OUT="$OUT" uninstall DESTDIR="$D" PREFIX=/usr >/dev/null 2>&1
left=$(cd "$D" && find . -type f -o -type l)
[ -z "$left" ] || fail "left after make uninstall: $left"
echo "ok    install-check: $(echo "$want" | wc -l) files, man pages render, units verify, uninstall leaves none"
