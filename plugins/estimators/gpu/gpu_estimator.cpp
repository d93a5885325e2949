#include "gpu_estimator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"

namespace phaze::estimators {

namespace {

// Output tiles (m × n) a GEMM may be cut into (header comment).
constexpr std::int64_t kTiles[][2] = {{256, 128}, {128, 256}, {128, 128},
                                      {128, 64},  {64, 128},  {64, 64}};
const char* const kKeys[] = {"gemm_efficiency", "memory_efficiency", "kernel_overhead_s"};
// Work Megatron-LM folds into neighbouring kernels: cuBLAS applies the 1/sqrt(d) scale as the
// GEMM's alpha, and the fused scale-mask-softmax kernels (masked_softmax_fusion, on by default)
// apply the scale and the causal mask inside the softmax, forward and backward. They cost no pass
// over memory and no kernel of their own, only their arithmetic.
bool FoldedAway(const std::string& function) {
  static const char* const kFolded[] = {"scale",       "mask",           "causal_mask",
                                        "scale_backward", "mask_backward", "causal_mask_backward"};
  for (const char* f : kFolded) {
    if (function == f) return true;
  }
  return false;
}

bool IsSeconds(const std::string& key) { return key.size() > 2 && key.substr(key.size() - 2) == "_s"; }

std::int64_t CeilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

GpuParameters GpuParameters::For(const ArchConfig& arch, const GpuParameters& defaults,
                                 const std::map<std::string, double>& overrides) {
  GpuParameters p = defaults;
  auto apply = [&](const std::map<std::string, double>& m) {
    if (auto it = m.find("gemm_efficiency"); it != m.end()) p.gemm_efficiency = it->second;
    if (auto it = m.find("memory_efficiency"); it != m.end()) p.memory_efficiency = it->second;
    if (auto it = m.find("kernel_overhead_s"); it != m.end()) p.kernel_overhead_s = it->second;
  };
  apply(arch.calibration);
  apply(overrides);
  return p;
}

GpuEstimator::GpuEstimator(const ConfigNode& params) {
  params.ExpectKeys({"gemm_efficiency", "memory_efficiency", "kernel_overhead_s"});
  for (const char* key : kKeys) {
    if (auto v = params.Optional(key)) {
      const double x = IsSeconds(key) ? v->AsNonNegativeDouble() : v->AsPositiveDouble();
      if (!IsSeconds(key) && x > 1) v->Fail("expected a fraction in (0, 1]");
      overrides_[key] = x;
    }
  }
}

OpEstimate GpuEstimator::Estimate(const OpWork& op, const ArchConfig& a, Pass) const {
  if (op.kind == OpKind::kCollective) {
    throw UnsupportedOpError("op '" + op.name + "' is a collective: the network model costs it");
  }
  OpEstimate e;
  if (op.Core() == CoreClass::kNone) {  // a view
    e.kernels = 0;
    return e;
  }
  // Folded work costs only its arithmetic, one operation per element on the SMs' FP32 lanes.
  const double lanes_per_s = static_cast<double>(a.num_vc * a.pe_vc) * a.frequency_hz;
  double folded_s = 0;
  bool all_folded = !op.vector.empty();
  for (const auto& v : op.vector) {
    if (FoldedAway(v.function)) {
      folded_s += static_cast<double>(v.elements) / lanes_per_s;
    } else {
      all_folded = false;
    }
  }
  if (!op.gemm && all_folded) {  // a scale or mask on its own: done inside the softmax kernel
    e.all_cores_s = folded_s;
    e.single_core_s = folded_s * static_cast<double>(a.num_vc);
    e.kernels = 0;
    return e;
  }
  const GpuParameters p = GpuParameters::For(a, GpuParameters{}, overrides_);
  if (!(p.gemm_efficiency > 0) || !(p.memory_efficiency > 0) || !(p.kernel_overhead_s >= 0)) {
    throw UnsupportedOpError("estimator 'gpu': architecture '" + a.name +
                             "' has a non-positive calibration value");
  }
  const double sms = static_cast<double>(a.num_vc);
  const double bandwidth = a.hbm_bandwidth_bytes_per_s * p.memory_efficiency;
  double seconds = 0;
  int kernels = 1;
  if (op.gemm) {
    const GemmShape& g = *op.gemm;
    const double tensor_cores_per_sm = static_cast<double>(a.num_tc) / sms;
    const double sm_flops_per_s =
        2.0 * tensor_cores_per_sm * static_cast<double>(a.pe_x * a.pe_y) * a.frequency_hz;
    const double l2_bytes_per_s_per_sm = a.glb_bandwidth_words_per_cycle *
                                         static_cast<double>(a.word_bytes) * a.frequency_hz / sms;
    double compute = std::numeric_limits<double>::infinity();
    for (const auto& [tm, tn] : kTiles) {
      const double tiles = static_cast<double>(g.batch * CeilDiv(g.m, tm) * CeilDiv(g.n, tn));
      const double k = static_cast<double>(g.k);
      const double tile_s =
          std::max(2.0 * static_cast<double>(tm * tn) * k / (sm_flops_per_s * p.gemm_efficiency),
                   static_cast<double>((tm + tn) * a.word_bytes) * k / l2_bytes_per_s_per_sm);
      compute = std::min(compute, std::ceil(tiles / sms) * tile_s);
    }
    const double bytes = static_cast<double>(op.bytes_read + op.bytes_written + op.weight_bytes);
    seconds = std::max(compute, bytes / bandwidth) + p.kernel_overhead_s;
    const double out_bytes = static_cast<double>(g.batch * g.m * g.n * a.word_bytes);
    for (const auto& v : op.vector) {  // fused epilogue passes
      if (!FoldedAway(v.function)) {
        seconds += 2 * out_bytes / bandwidth + p.kernel_overhead_s;
        ++kernels;
      }
    }
    seconds += folded_s;
  } else {
    const double bytes = static_cast<double>(op.bytes_read + op.bytes_written + op.weight_bytes);
    seconds = bytes / bandwidth + p.kernel_overhead_s;
  }
  e.all_cores_s = seconds;
  e.kernels = kernels;
  e.single_core_s = seconds * sms;
  return e;
}

plugin::PluginInfo GpuPlugin() {
  return {plugin::kAbiVersion, "gpu", "1.0.0",
          "GPU kernels: GEMM tiles in waves over the SMs, memory-bound vector ops, kernel overhead",
          [](Registry& registry) {
            registry.AddEstimator("gpu",
                                  "GPU kernel latency (params: gemm_efficiency, memory_efficiency, "
                                  "kernel_overhead_s; default: the preset's "
                                  "calibration)",
                                  [](const ConfigNode& params) {
                                    return std::make_shared<GpuEstimator>(params);
                                  });
          }};
}

}  // namespace phaze::estimators

PHAZE_PLUGIN_ENTRY(phaze::estimators::GpuPlugin)
