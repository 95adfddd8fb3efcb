#!/usr/bin/env bash
# One server, many nodes and a long queue: fake agents over the real agent
# protocol. Usage: bench/scale.sh [--baseline REF] [--nodes 10000] [--jobs 100000] [--steady 30s]
#   [--decisions 50] [--curve 1000,5000,10000,20000] [--gogc 400,100] [--profile DIR] [--pin=false]
#   [--node-lease 30s]
# --profile DIR with --baseline (no --curve) writes the baseline's profiles
# into DIR/base and this tree's into DIR/this.
# --pin (on by default with 2 CPUs or more) runs the server on CPU 0 and the
# bench, its fake agents and clients, on the others (taskset), so that the
# figures are the server's.
# --curve measures a fresh server at each size (steady state only) and
# prints RSS, heap, CPU, bytes per node and per queued job. --baseline REF builds a server
# from REF (a commit or branch of this repository) too: with --curve each
# point of it is measured beside this tree's in the same run; without, the
# whole bench runs against it first, then against this tree, and the two
# runs' figures are printed one beside the other.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
args=()
base=""
curve=""
profile=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--baseline) base="$2"; shift 2 ;;
	--baseline=*) base="${1#*=}"; shift ;;
	--profile) profile="$2"; shift 2 ;;
	--profile=*) profile="${1#*=}"; shift ;;
	--curve|--curve=*) curve=1; args+=("$1"); [[ $1 == --curve ]] && { args+=("$2"); shift; }; shift ;;
	*) args+=("$1"); shift ;;
	esac
done
go build -o "$bin/shoal" ./cmd/shoal-server
go build -o "$bin/scale" ./bench/scale
if [[ -n $base ]]; then
	mkdir "$bin/src"
	git archive --format=tar "$base" | tar -x -C "$bin/src"
	(cd "$bin/src" && go build -o "$bin/shoal-base" "$(test -d cmd/shoal-server && echo ./cmd/shoal-server || echo ./cmd/shoal)")
fi
if [[ -z $base ]]; then
	"$bin/scale" --bin "$bin/shoal" ${profile:+--profile "$profile"} "${args[@]}"
	exit
fi
if [[ -n $curve ]]; then
	"$bin/scale" --bin "$bin/shoal" --baseline-bin "$bin/shoal-base" ${profile:+--profile "$profile"} "${args[@]}"
	exit
fi
echo "== baseline ($base)"
"$bin/scale" --bin "$bin/shoal-base" ${profile:+--profile "$profile/base"} "${args[@]}" | tee "$bin/base.out"
echo "== this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes))"
"$bin/scale" --bin "$bin/shoal" ${profile:+--profile "$profile/this"} "${args[@]}" | tee "$bin/this.out"
echo "== side by side (baseline | this tree)"
paste -d '\n' <(sed 's/^/  base: /' "$bin/base.out") <(sed 's/^/  this: /' "$bin/this.out")
