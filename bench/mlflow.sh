#!/usr/bin/env bash
# Measures what a big MLflow run costs: one job's run filled with 200,000
# points, then small log-batches into it beside another client's compute
# updates, each one request after another: median and p99 latency of
# both, over 3 runs on fresh servers. With --baseline REV, the code at
# git revision REV is built too and its runs alternate with the working
# tree's, so a change is compared with what it replaces in one sitting.
# Before the running totals (issue 35) filling the run alone took the
# baseline 12 minutes on a loaded 2-core machine: --points and --runs
# trim it. Usage:
# bench/mlflow.sh [--baseline REV] [--runs N] [--points N] [--samples N] [--batch N]
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
go run ./bench/mlflow --bin "$bin/shoal" "${args[@]}"
