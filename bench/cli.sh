#!/usr/bin/env bash
# Measures a `shoal` CLI process's start: the sum of its packages' init
# (GODEBUG=inittrace=1) and the process's wall time, for commands that
# need no server (`shoal version`, `shoal job create --help`), median of
# --runs. With --baseline REV, the CLI at git revision REV is built too and
# its processes alternate with the working tree's in the same run.
# With --submit N it measures instead N job submissions, one process each
# (`shoal job create` against a running `shoal-server server` with warm
# local nodes), beside the baseline's and beside `sbatch` on a real
# slurmctld + slurmd (as root, with Debian's slurmctld, slurmd,
# slurm-client and munge; --slurm=false leaves Slurm out): jobs/s and
# submit → job process start, p50/p99.
# --bin-dir DIR takes this tree's shoal and shoal-server prebuilt from DIR,
# --baseline-bin BIN a prebuilt baseline (a full shoal, as before issue 40)
# instead of building REV.
# Usage: bench/cli.sh [--baseline REV | --baseline-bin BIN] [--bin-dir DIR] [--runs N]
#        bench/cli.sh [--baseline REV | --baseline-bin BIN] [--bin-dir DIR] --submit N
#                     [--chunk N] [--nodes N] [--slurm=false]
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
		# After issue 40 the server is shoal-server; its `shoal server`
		# hands over to it (beside it), so build it too when it exists.
		if [ -d "$base_tree/cmd/shoal-server" ]; then
			(cd "$base_tree" && go build -o "$bin/baseline/shoal-server" ./cmd/shoal-server)
			args+=(--baseline-server "$bin/baseline/shoal-server")
		fi
		shift 2
		;;
	--baseline-bin)
		args+=(--baseline "$2")
		shift 2
		;;
	--bin-dir)
		prebuilt="$2"
		shift 2
		;;
	*)
		args+=("$1")
		shift
		;;
	esac
done
if [ -n "${prebuilt:-}" ]; then
	cp "$prebuilt/shoal" "$prebuilt/shoal-server" "$bin/"
else
	go build -o "$bin/" ./cmd/shoal ./cmd/shoal-server
fi
go run ./bench/cli --bin "$bin/shoal" --server "$bin/shoal-server" "${args[@]}"
