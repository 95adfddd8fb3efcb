#!/usr/bin/env bash
# Chaos trials: a mixed workload on a real server while kill -9 of the
# server and of agents and low-priority eviction storms are injected;
# invariants checked after each trial. Also agents partitioned from the
# server (a proxy on their advertise_url), store errors (a failpoint) and
# a full disk (the data dir on a small tmpfs). Usage: bench/chaos.sh [--trials N]
# [--jobs N] [--seed S] (the defaults are the full suite: 20 trials of 1,000 jobs)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -tags failpoint -o "$bin/shoal" ./cmd/shoal  # store errors can be injected
go run ./bench/chaos --bin "$bin/shoal" "$@"
