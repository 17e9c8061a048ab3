#!/bin/bash
# in-attempt.sh DIR -- CMD...: run CMD inside an egret attempt, in step with
# bench.sh outside it (an attempt may not query BPF itself):
#   write DIR/cg (our cgroup path), wait for DIR/go1, run CMD,
#   write DIR/done, wait for DIR/go2, exit with CMD's status.
# Outside, bench.sh snapshots the attempt's BPF program stats at go1 and go2.
# Every wait is bounded (10 s).
set -u
dir=$1; shift; [ "$1" = -- ] && shift
waitfor() {
	local i
	for ((i = 0; i < 1000; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.01
	done
	echo "in-attempt: timed out waiting for $1" >&2
	return 1
}
awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup >"$dir/cg.tmp"
mv "$dir/cg.tmp" "$dir/cg"
waitfor "$dir/go1" || exit 1
"$@"; rc=$?
: >"$dir/done"
waitfor "$dir/go2"
exit $rc
