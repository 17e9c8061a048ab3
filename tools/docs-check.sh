#!/bin/bash
# docs-check.sh - facts the docs repeat from the code, checked against it,
# so that one of them cannot drift alone (issue 38: README said the
# catalog had no upload budgets while the catalog and two docs gave them).
# A fact is a row of check_* below. Usage: tools/docs-check.sh
set -u
cd "$(dirname "$0")/.." || exit 1
failed=0
fail() { echo "FAIL  docs-check: $*"; failed=1; }

# The catalog's default upload budgets (user/policy/catalog.yaml,
# upload_limits:), as "CATEGORY SIZE" in README.md and docs/BUDGETS.md and
# as "CATEGORY: SIZE" in docs/POLICY.md's table.
check_upload_budgets() {
	local cat size n=0
	while read -r cat size; do
		n=$((n + 1))
		grep -q "$cat $size" README.md || fail "README.md does not give $cat's upload budget $size"
		grep -q "$cat $size" docs/BUDGETS.md || fail "docs/BUDGETS.md does not give $cat's upload budget $size"
		grep -q "\`$cat: $size\`" docs/POLICY.md || fail "docs/POLICY.md does not give $cat's upload budget $size"
	done < <(awk '/^upload_limits:/ { on = 1; next } on && /^  [a-z_]+: / { sub(":", ""); print $1, $2; next } on { exit }' \
		user/policy/catalog.yaml)
	[ "$n" -gt 0 ] || fail "no upload_limits: found in user/policy/catalog.yaml"
}

# egret run's options by audience (user/attempt/run_options.def, read by
# the C preprocessor as the code reads it): docs/EGRETD.md's table of
# "Options through egretd" names exactly the rows of each audience, and
# egret(1) every option a caller may send through egretd (and --via, the
# client's own).
run_options() {	# VIA: the names of the rows with that bit, sorted
	${CC:-cc} -E -P -D'RUN_OPTION(n,s,m,v,p,h)=n v' -x c user/attempt/run_options.def |
		awk -v via="$1" '{ gsub(/"/, "", $1) } index($0, via) { print $1 }' | sort
}

# The names of the `--NAME`s (or `NAME`s) on stdin, sorted.
# shellcheck disable=SC2016 # the backquotes are Markdown's
names() {
	grep -o -e '`[a-z-]*`' | tr -d '`' | sed 's/^--//' | sort -u
}

# The second column of docs/EGRETD.md's row for an audience.
audience() {	# ROW-PREFIX
	grep -F -e "$1" docs/EGRETD.md | awk -F'|' '{ print $3 }' | names
}

same() {	# WHERE WANT GOT
	[ "$2" = "$3" ] || fail "$1 lists '${3//$'\n'/ }', egret run's table says '${2//$'\n'/ }'"
}

check_run_options() {
	local passed field egretd caller man
	passed=$(run_options RUN_VIA_OPTION) field=$(run_options RUN_VIA_FIELD)
	egretd=$(run_options RUN_VIA_EGRETD)
	caller=$(printf '%s\n%s\nvia\n' "$passed" "$field" | sort)
	if [ -z "$passed" ] || [ -z "$field" ] || [ -z "$egretd" ]; then
		fail "no options by audience in user/attempt/run_options.def"
	fi
	same "docs/EGRETD.md, passed on," "$passed" "$(audience '| passed on (')"
	same "docs/EGRETD.md, a field of its own," "$field" "$(audience '| a field of its own (')"
	same "docs/EGRETD.md, egretd's," "$egretd" "$(audience "| egretd's (")"
	man=$(awk '/^Through egretd only/ { on = 1 } on { print } /^are taken;/ { exit }' docs/man/egret.1 |
		sed -n 's/^\.BR\{0,1\} \\-\\-\([a-z\\-]*\).*/\1/p' | sed 's/\\//g' | sort -u)
	same "egret(1), Through egretd only," "$caller" "$man"
}

# egretd.yaml's metrics: keys (the rules table of
# user/daemon/config_metrics.c) are exactly docs/EGRETD.md's `metrics.KEY`
# rows; every metric the exposition names (user/daemon/metrics.c) has a
# row in its table of metrics.
check_metrics() {
	local code doc m
	code=$(sed -n '/static const struct key_rule rules\[\] = {/,/};/p' user/daemon/config_metrics.c |
		grep -o '{ "[a-z_]*"' | tr -d '{" ' | sort)
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	doc=$(grep -o '^| `metrics\.[a-z_]*`' docs/EGRETD.md | sed 's/.*metrics\.//; s/`//' | sort)
	[ -n "$code" ] || fail "no metrics: keys in user/daemon/config_metrics.c"
	[ "$code" = "$doc" ] || fail "docs/EGRETD.md's metrics.* rows list '${doc//$'\n'/ }', config_metrics.c's table '${code//$'\n'/ }'"
	for m in $(grep -o '"egret_[a-z_]*"' user/daemon/metrics.c | tr -d '"' | sort -u); do
		grep -q "\`$m\`" docs/EGRETD.md || fail "docs/EGRETD.md's metrics table has no row for $m"
	done
}

check_upload_budgets
check_run_options
check_metrics
[ "$failed" = 0 ] && echo "ok    docs-check: the docs' figures match the code's"
exit "$failed"
