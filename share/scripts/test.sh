#!/usr/bin/env bash
# README quick-start command 2: install what is missing, build, and run the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${PHAZE_BUILD_DIR:-$root/build}
bash "$root/share/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j "${PHAZE_JOBS:-2}"
