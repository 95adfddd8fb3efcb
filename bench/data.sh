#!/usr/bin/env bash
# Measures how fast a job's inputs reach a node, side by side in one run:
# objstore.Download of a uri_folder (1 GiB of 1,000 files by default) from
# versitygw and Azurite against a plain sequential copy of the same bytes,
# a data cache's second Get of the same version, and (with a real server
# and agent built from this tree) the start of jobs reading the cached
# version against jobs without inputs. Needs Azurite and versitygw
# (scripts/test installs them) and root (the agent's job namespaces).
# Usage: bench/data.sh [--size BYTES] [--files N] [--jobs N] [--rounds N]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/shoal" ./cmd/shoal-server
go run ./bench/data --bin "$bin/shoal" "$@"
