#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer) into ${1:-build-fuzz}:
# config_fuzz (YAML/JSON layer, model files), dag_fuzz (DAG files and the scheduler's linear
# paths), graph_fuzz (graph files). Only the framework sources they need are compiled. Run one with
#   build-fuzz/config_fuzz -max_total_time=600 -timeout=10 -rss_limit_mb=4096 build-fuzz/corpus-config
# seeding its corpus from tests/corpus/inputs (see tests/README.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$root/build-fuzz}
mkdir -p "$out/obj"
flags=(-std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -I"$root/framework/include")
sources=(config/config_node core/error core/files core/json core/svg graph/model_spec graph/hf_config
         graph/graph_file
         graph/operator graph/operator_graph graph/layer_graph graph/backward graph/fusion
         schedule/schedule_file schedule/schedule_problem schedule/precedence schedule/list_schedule
         schedule/schedule_search)
objects=()
for s in "${sources[@]}"; do
  o="$out/obj/${s//\//_}.o"
  if [[ ! -f "$o" || "$root/framework/src/$s.cpp" -nt "$o" ]]; then
    clang++ "${flags[@]}" -fsanitize=fuzzer-no-link -c "$root/framework/src/$s.cpp" -o "$o" &
  fi
  objects+=("$o")
  while (( $(jobs -r | wc -l) >= ${PHAZE_JOBS:-2} )); do sleep 0.2; done
done
wait
for t in config dag graph; do
  clang++ "${flags[@]}" -fsanitize=fuzzer "$root/tests/fuzz/${t}_fuzz.cpp" "${objects[@]}" \
    -lyaml-cpp -o "$out/${t}_fuzz"
done
echo "fuzz targets in $out"
