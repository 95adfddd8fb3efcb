#!/usr/bin/env bash
# Measures how fast a job's inputs reach a node, side by side in one run:
# objstore.Download of a uri_folder (1 GiB of 1,000 files by default) from
# versitygw and Azurite against a plain sequential copy of the same bytes,
# and a data cache's second Get of the same version. Needs Azurite and
# versitygw (scripts/test installs them). Usage: bench/data.sh [--size BYTES] [--files N]
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./bench/data "$@"
