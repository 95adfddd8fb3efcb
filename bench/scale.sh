#!/usr/bin/env bash
# One server, many nodes and a long queue: fake agents over the real agent
# protocol. Usage: bench/scale.sh [--baseline REF] [--nodes 10000] [--jobs 100000] [--steady 30s] [--decisions 50]
# --baseline REF runs the same bench first against a server built from REF
# (a commit or branch of this repository), then against this tree, and
# prints the two runs' figures one beside the other.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
base=""
if [[ ${1:-} == --baseline ]]; then
	base=$2
	shift 2
	git worktree add --quiet --detach "$bin/src" "$base"
	(cd "$bin/src" && go build -o "$bin/shoal-base" ./cmd/shoal)
	git worktree remove --force "$bin/src"
fi
go build -o "$bin/shoal" ./cmd/shoal
go build -o "$bin/scale" ./bench/scale
if [[ -z $base ]]; then
	"$bin/scale" --bin "$bin/shoal" "$@"
	exit
fi
echo "== baseline ($base)"
"$bin/scale" --bin "$bin/shoal-base" "$@" | tee "$bin/base.out"
echo "== this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes))"
"$bin/scale" --bin "$bin/shoal" "$@" | tee "$bin/this.out"
echo "== side by side (baseline | this tree)"
paste -d '\n' <(sed 's/^/  base: /' "$bin/base.out") <(sed 's/^/  this: /' "$bin/this.out")
