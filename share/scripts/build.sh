#!/usr/bin/env bash
# Installs what is missing (setup.sh), then configures and builds Phaze into ./build (or $PHAZE_BUILD_DIR).
# Used by the two README quick-start commands and by CI.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${PHAZE_BUILD_DIR:-$root/build}
bash "$root/share/scripts/setup.sh"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build "$build" -j "${PHAZE_JOBS:-2}"
