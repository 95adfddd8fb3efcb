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
bin=$(mktemp -d)
cleanup() {
	[ -n "${base_tree:-}" ] && git worktree remove --force "$base_tree" 2>/dev/null
	rm -rf "$bin"
}
trap cleanup EXIT
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--baseline)
		base_tree="$bin/baseline-src"
		git worktree add --detach --quiet "$base_tree" "$2"
		(cd "$base_tree" && go build -o "$bin/shoal-baseline" "$(test -d cmd/shoal-server && echo ./cmd/shoal-server || echo ./cmd/shoal)")
		args+=(--baseline "$bin/shoal-baseline")
		shift 2
		;;
	*)
		args+=("$1")
		shift
		;;
	esac
done
go build -o "$bin/shoal" ./cmd/shoal-server
go run ./bench/jobs --bin "$bin/shoal" "${args[@]}"
