#!/usr/bin/env bash
# Measures compute instance operations with real agent processes: create,
# stop and start until the server reports them done. Prints one line each.
# Usage: bench/instances.sh [--rounds N]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/shoal" ./cmd/shoal
go run ./bench/instances --agent "$bin/shoal" "$@"
