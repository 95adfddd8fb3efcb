#!/usr/bin/env bash
# Measures the job path with a real server and agent processes: submit→
# running latency on a warm node and throughput through 8 local nodes, over
# 5 runs in a row (each on a fresh server and data dir); prints every run
# and the medians. With --baseline REV, the code at git revision REV is
# built too and its runs alternate with the working tree's, so a change is
# compared with what it replaces in one sitting.
# Usage: bench/jobs.sh [--baseline REV] [--store sqlite|postgres|both] [--runs N]
#                      [--latency-jobs N] [--throughput-jobs N] [--nodes N] [--keep] [--cpuprofile FILE]
#                      [--agent-cpuprofile FILE]
# (--store postgres starts a private PostgreSQL server: as root, with Debian's postgresql)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_baseline() {
	(cd "$1" && go build -o "$bin/shoal-baseline" "$(full_pkg)" >&2) && echo "--baseline $bin/shoal-baseline"
}
bench_args build_baseline "$@"
go build -o "$bin/shoal" ./cmd/shoal-server
go run ./bench/jobs --bin "$bin/shoal" "${args[@]}"
