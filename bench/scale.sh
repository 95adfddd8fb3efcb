#!/usr/bin/env bash
# One server, many nodes and a long queue: fake agents over the real agent
# protocol. Usage: bench/scale.sh [--nodes 10000] [--jobs 100000] [--steady 30s]
#   [--curve 1000,5000,10000,20000] [--profile DIR] [--baseline REV]
# --curve measures a fresh server at each size (steady state only) and
# prints RSS, heap, CPU and bytes per node; --baseline REV also builds the
# server at git revision REV (e.g. main) and measures it the same way in
# the same run, each point beside this tree's.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
args=()
base=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--baseline) base="$2"; shift 2 ;;
	--baseline=*) base="${1#*=}"; shift ;;
	*) args+=("$1"); shift ;;
	esac
done
go build -o "$bin/shoal" ./cmd/shoal
if [[ -n $base ]]; then
	mkdir "$bin/src"
	git archive --format=tar "$base" | tar -x -C "$bin/src"
	(cd "$bin/src" && go build -o "$bin/baseline" ./cmd/shoal)
	args+=(--baseline-bin "$bin/baseline")
fi
go run ./bench/scale --bin "$bin/shoal" "${args[@]}"
