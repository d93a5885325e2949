#!/usr/bin/env bash
# README quick-start command 1: install what is missing, build, and run the main job.
# Until the search driver exists (issue 9) the main job lists the plugins; it will become
# `phaze search --config share/runs/default.yaml`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bash "$root/share/scripts/build.sh"
"${PHAZE_BUILD_DIR:-$root/build}/phaze" plugins
