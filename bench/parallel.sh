#!/usr/bin/env bash
# Measures batch inference (parallel jobs) with a real server, agents and
# CLI: a 10,000-file scoring job on 1, 2 and 4 local nodes (throughput and
# scaling against 1 node), Shoal's overhead per mini-batch against the
# entry script's own time, and the time to finish after one of 4 nodes is
# preempted at half-way against the same run without preemption; medians
# of --runs runs.
# Usage: bench/parallel.sh [--files N] [--mini-batch N] [--work-ms MS] [--nodes 1,2,4] [--runs N] [--keep]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/shoal" ./cmd/shoal-server
go run ./bench/parallel --bin "$bin/shoal" "$@"
