#!/usr/bin/env bash
# stress.sh - `make stress`: egretd under CPU load, the bar of issue 25.
#
#   EGRET=/abs/build/egret HELPERS=/abs/build/helpers tests/stress.sh
#
# With `stress-ng --cpu 2` running beside them (every CPU of these
# machines busy): STRESS_ATTEMPTS (500) sequential `true` attempts through
# egretd, each of which must end 0 (never 125), then STRESS_RUNS (20) runs
# in a row of the egretd and fault tests (STRESS_TESTS, a run.sh regex),
# each of which must pass whole. A flaky test is a defect: nothing is
# retried. About 40 minutes with the defaults; a benchmark-like job, never
# part of `make test`.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runs=${STRESS_RUNS:-20}
attempts=${STRESS_ATTEMPTS:-500}
tests=${STRESS_TESTS:-t_egretd|t_fault}

command -v stress-ng >/dev/null ||
	{ echo "stress.sh: stress-ng missing (tools/install-deps.sh stress)" >&2; exit 1; }
stress-ng --cpu 2 --quiet &
load=$!
trap 'kill "$load" 2>/dev/null; wait "$load" 2>/dev/null' EXIT
echo "== $attempts sequential true attempts through egretd, stress-ng --cpu 2 beside"
FAST_ATTEMPTS=$attempts FAST_ONLY_TRUE=1 TEST_TIMEOUT=1800 VERBOSE=1 \
	"$HERE/integration/run.sh" '^t_fault_fast_commands$' || exit 1
for ((i = 1; i <= runs; i++)); do
	start=$SECONDS
	out=$("$HERE/integration/run.sh" "$tests" 2>&1)
	rc=$?
	echo "== run $i of $runs: $(echo "$out" | tail -n 1) in $((SECONDS - start)) s"
	if [ "$rc" -ne 0 ]; then
		echo "$out" | grep -v '^ok '
		echo "stress: run $i failed"
		exit 1
	fi
done
echo "stress: $runs runs in a row passed, under stress-ng --cpu 2"
