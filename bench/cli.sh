#!/usr/bin/env bash
# Measures a `shoal` CLI process's start: the sum of its packages' init
# (GODEBUG=inittrace=1) and the process's wall time, for commands that
# need no server (`shoal version`, `shoal job create --help`), median of
# --runs. With --baseline REV, the CLI at git revision REV is built too and
# its processes alternate with the working tree's in the same run.
# Usage: bench/cli.sh [--baseline REV] [--runs N]
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
		# The baseline's CLI is its cmd/shoal (before issue 40, the full binary).
		mkdir -p "$bin/baseline"
		(cd "$base_tree" && go build -o "$bin/baseline/shoal" ./cmd/shoal)
		args+=(--baseline "$bin/baseline/shoal")
		shift 2
		;;
	*)
		args+=("$1")
		shift
		;;
	esac
done
go build -o "$bin/" ./cmd/shoal ./cmd/shoal-server
go run ./bench/cli --bin "$bin/shoal" "${args[@]}"
