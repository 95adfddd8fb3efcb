#!/usr/bin/env bash
# One server, many nodes and a long queue: fake agents over the real agent
# protocol. Usage: bench/scale.sh [--nodes 10000] [--jobs 100000] [--steady 30s]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/shoal" ./cmd/shoal
go run ./bench/scale --bin "$bin/shoal" "$@"
