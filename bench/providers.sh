#!/usr/bin/env bash
# Compares the providers side by side with real agents: provision → idle
# (cold and warm) and submit → running on a warm node. The ssh provider's
# host is a real OpenSSH server in a network namespace and the slurm provider's
# partition a real slurmctld + slurmd: run it as root with
# openssh-server, iproute2, slurmctld, slurmd, slurm-client and munge installed
# (scripts/test installs them).
# Usage: bench/providers.sh [--rounds N] [--jobs N]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/shoal" ./cmd/shoal-server
go run ./bench/providers --agent "$bin/shoal" "$@"
