#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer) into ${1:-build-fuzz}: a CMake
# build of the whole tree with PHAZE_FUZZ=ON and PHAZE_SANITIZE=ON (tests and benchmarks off), so
# the targets reach the same sources as `phaze`, no hand-kept list:
#   config_fuzz       the YAML/JSON layer with every typed read, model files, Hugging Face configs
#   dag_fuzz          DAG files, then precedence, articulation ops, list schedule and bound
#   graph_fuzz        graph files
#   calibration_fuzz  architecture files (calibration, energy), system levels, cost-model files
#   predict_fuzz      `phaze predict`'s flags through the host, with this build's plugins
# About 10 minutes on 2 cores the first time. Run one with
#   build-fuzz/predict_fuzz -max_total_time=600 -timeout=10 -rss_limit_mb=4096 CORPUS_DIR SEEDS
# (seeds: tests/corpus/inputs for the readers, tests/fuzz/seeds/predict for predict_fuzz;
# tests/README.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$root/build-fuzz}
mkdir -p "$out"
CXX=${CXX:-clang++} cmake -S "$root" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-O1 -g" -DPHAZE_FUZZ=ON -DPHAZE_SANITIZE=ON -DPHAZE_BUILD_TESTS=OFF \
  -DPHAZE_BUILD_BENCHMARKS=OFF -DPHAZE_WITH_MPI=OFF > "$out/configure.log"
cmake --build "$out" -j "${PHAZE_JOBS:-2}"
echo "fuzz targets in $out"
