#!/usr/bin/env bash
# 100 concurrent API clients for 60 s against a real server: throughput,
# p50/p99 latency and statuses per operation, and the If-Match counter's
# lost updates (must be 0). Usage: bench/load.sh [--clients N] [--duration 60s]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/shoal" ./cmd/shoal-server
go run ./bench/load --agent "$bin/shoal" "$@"
