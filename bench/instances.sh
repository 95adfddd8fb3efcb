#!/usr/bin/env bash
# Measures compute instance operations with real agent processes, a host-process
# instance and one in a container side by side (--containers=false: the first alone): create,
# stop and start until the server reports them done, and Jupyter answering
# through the app proxy after each start. The container half needs root, podman,
# runc, mmdebstrap and docker-registry (scripts/test installs them).
# Usage: bench/instances.sh [--rounds N] [--containers=false]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/shoal" ./cmd/shoal-server
go run ./bench/instances --agent "$bin/shoal" "$@"
