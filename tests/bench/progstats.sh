# shellcheck shell=bash
# progstats.sh - sourced by the benchmarks that read the BPF programs' own
# cost (bench.sh, ab.sh, http_bodies.sh): run_cnt and run_time_ns, which
# the kernel counts while kernel.bpf_stats_enabled is 1.

# The BPF programs attached to cgroup $1: "<id> <attach_type> <name> <cnt> <ns>".
snap() {
	bpftool -j cgroup show "$1" | jq -r '.[] | "\(.id) \(.attach_type)"' |
	while read -r id at; do
		bpftool -j prog show id "$id" | jq -r --arg at "$at" \
			'"\(.id) \($at) \(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"'
	done
}
