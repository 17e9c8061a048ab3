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

check_upload_budgets
[ "$failed" = 0 ] && echo "ok    docs-check: the docs' figures match the code's"
exit "$failed"
