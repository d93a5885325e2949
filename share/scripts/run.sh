#!/usr/bin/env bash
# README quick-start command 1: install what is missing, build, and run the main job: the default
# search (share/runs/default.yaml), outputs in phaze-results/. Extra arguments go to `phaze search`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bash "$root/share/scripts/build.sh"
"${PHAZE_BUILD_DIR:-$root/build}/phaze" search --config "$root/share/runs/default.yaml" "$@"
