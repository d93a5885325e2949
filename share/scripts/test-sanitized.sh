#!/usr/bin/env bash
# The sanitized test job (CI's second step; tests/README.md): builds phaze with AddressSanitizer
# and UBSan into ./build-sanitized (or $PHAZE_SANITIZED_BUILD_DIR) and runs the whole CTest suite
# (the validation sets take about a minute under it). Leak checking is off: CoinUtils and Open MPI
# keep allocations until exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${PHAZE_SANITIZED_BUILD_DIR:-$root/build-sanitized}
bash "$root/share/scripts/setup.sh"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS=-O1 \
    -DPHAZE_SANITIZE=ON -DPHAZE_BUILD_BENCHMARKS=OFF -DPHAZE_WITH_MPI=OFF >/dev/null
fi
cmake --build "$build" -j "${PHAZE_JOBS:-2}"
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir "$build" --output-on-failure -j "${PHAZE_JOBS:-2}"
