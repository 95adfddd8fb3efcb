#!/usr/bin/env bash
# Chaos trials: a mixed workload on a real server while kill -9 of the
# server and of agents and low-priority eviction storms are injected;
# invariants checked after each trial. Also agents partitioned from the
# server (a proxy on their advertise_url), store errors (a failpoint) and
# a full disk (the data dir on a small tmpfs). Every flag is passed to
# bench/chaos: bench/chaos.sh [--trials N] [--jobs N] [--every D] [--seed S]
# [--settling D] [--keep] [--long] [--bin PATH] [--store sqlite|postgres]
# [--servers N] [--leader-lease D] [--baseline REV | --baseline-bin PATH].
# The defaults are the full suite (20 trials of 1,000 jobs, a fault every
# 2 s on average); --long asks for it by name and sets only the flags not
# given; scripts/test runs the short one (--trials 1 --jobs 40 --every 1s).
# --store postgres runs --servers servers (default 2) on one database of a
# private PostgreSQL server (root, Debian's postgresql) and kills the
# leader among the faults. --baseline REV builds the code at git revision
# REV too (with -tags failpoint) and runs the same trials on it,
# alternating, both reported. A --bin given here wins over the binary
# built below (the bench never removes a binary it was given).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_baseline() {
	(cd "$1" && go build -tags failpoint -o "$bin/shoal-baseline" "$(full_pkg)" >&2) && echo "--baseline-bin $bin/shoal-baseline"
}
bench_args build_baseline "$@"
go build -tags failpoint -o "$bin/shoal" ./cmd/shoal-server  # store errors can be injected
go run ./bench/chaos --bin "$bin/shoal" "${args[@]}"
