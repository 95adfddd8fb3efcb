#!/usr/bin/env bash
# Measures the job path with real agent processes: submit→running latency
# on a warm node and throughput through 8 local nodes. Prints one line each.
# Usage: bench/jobs.sh [--store sqlite|postgres|both] [--latency-jobs N] [--throughput-jobs N] [--nodes N]
# (--store postgres starts a private PostgreSQL server: as root, with Debian's postgresql)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/shoal" ./cmd/shoal
go run ./bench/jobs --agent "$bin/shoal" "$@"
