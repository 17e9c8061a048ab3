#!/usr/bin/env bash
# sanitize.sh - run the integration suite with a sanitized $EGRET and fail
# on any ASan, LSan or UBSan report (make sanitize). A report may come from
# a run whose test still passed (a leak at exit, say), so the suite's
# result alone is not enough: every sanitizer writes to $REPORTS instead.
set -uo pipefail
: "${EGRET:?}" "${HELPERS:?}" "${REPORTS:?}"
cd "$(dirname "$0")/.." || exit 1

rm -rf "$REPORTS" && mkdir -p "$REPORTS" || exit 1
export ASAN_OPTIONS="log_path=$REPORTS/asan:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="log_path=$REPORTS/ubsan:print_stacktrace=1:halt_on_error=1"
export EGRET HELPERS

tests/integration/run.sh
suite=$?

reports=$(find "$REPORTS" -type f | sort)
if [ -n "$reports" ]; then
	echo "sanitize: reports in $REPORTS:" >&2
	for f in $reports; do
		echo "== $f" >&2
		head -40 "$f" >&2
	done
	exit 1
fi
[ "$suite" -eq 0 ] || { echo "sanitize: the integration suite failed" >&2; exit 1; }
echo "sanitize: integration suite clean under ASan+UBSan"
