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
. bench/lib.sh
# The baseline's CLI is its cmd/shoal (before issue 40, the full binary);
# after issue 40 its `shoal server` hands over to shoal-server beside it,
# built too when the tree has it.
build_baseline() {
	mkdir -p "$bin/baseline"
	(cd "$1" && go build -o "$bin/baseline/" ./cmd/shoal $(test -d cmd/shoal-server && echo ./cmd/shoal-server) >&2) || return 1
	echo "--baseline $bin/baseline/shoal"
	if [ -x "$bin/baseline/shoal-server" ]; then echo "--baseline-server $bin/baseline/shoal-server"; fi
}
bench_args build_baseline "$@"
prebuilt= rest=()
for ((i = 0; i < ${#args[@]}; i++)); do
	case "${args[i]}" in
	--baseline-bin) rest+=(--baseline "${args[i + 1]}") && i=$((i + 1)) ;;
	--bin-dir) prebuilt=${args[i + 1]} && i=$((i + 1)) ;;
	*) rest+=("${args[i]}") ;;
	esac
done
if [ -n "$prebuilt" ]; then
	cp "$prebuilt/shoal" "$prebuilt/shoal-server" "$bin/"
else
	go build -o "$bin/" ./cmd/shoal ./cmd/shoal-server
fi
go run ./bench/cli --bin "$bin/shoal" --server "$bin/shoal-server" "${rest[@]}"
