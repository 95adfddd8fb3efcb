#!/usr/bin/env bash
# Measures what running a job in a container costs, side by side in one
# run: submit→process start for a bare job, for a job in a container whose
# image the node has, and `podman run --rm IMAGE true` alone; then a first
# pull through Shoal against `podman pull`. Needs root, podman, runc,
# mmdebstrap and docker-registry (scripts/test installs them).
# Usage: bench/containers.sh [--jobs N] [--pulls N]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/shoal" ./cmd/shoal-server
go run ./bench/containers --agent "$bin/shoal" "$@"
