// The tiny search shared by the CLI and MPI tests: tiny-gpt on a 32-config space (area buckets of
// 10 mm² hold several configs each), converging after about 14 configs.
#pragma once

#include <string>

#include "test_paths.hpp"

namespace phaze::testing {

// The run config; the space is `space.yaml` beside it (kTinySpace). `extra` is appended.
inline std::string TinySearchConfig(const std::string& extra = "") {
  const std::string workloads = std::string(PHAZE_SOURCE_DIR) + "/workloads/";
  return "models:\n  - file: " + workloads + "tiny-gpt.yaml\n    expert: [2, 4, 1]\n"
         "arch: {space: space.yaml, presets: [tpuv4]}\n"
         "cluster: {num_accelerators: 16}\n"
         "training: {global_batch: 64, micro_batches: [1, 2], tensor_parallel_widths: [1, 2],\n"
         "           hbm_gib: [16, 32], recompute: [false, true]}\n"
         "search: {mode: hysteresis, hysteresis_level: 2, bucket_width_mm2: 10}\n" + extra;
}

inline const char* kTinySpace =
    "name: tiny\nnum_tc: [8, 4]\nnum_vc: [2, 1]\npe_x: [128, 64]\npe_y: [128, 64]\n"
    "glb_mib: [128, 64]\narea_budget: {preset: tpuv4}\nmin_area_fraction: 0.1\n"
    "min_area_fraction_single_core: 0.1\n";

// results.json without the wall times (the only part allowed to differ between runs).
inline std::string WithoutTimings(const std::string& json) {
  return json.substr(0, json.find("\"timings\""));
}

}  // namespace phaze::testing
