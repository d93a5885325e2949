// The "gpu" estimator: per-kernel latency on an NVIDIA-style GPU described as a preset of the
// template (share/arch/a100-sxm-80gb.yaml): num_vc = SMs, num_tc / num_vc tensor cores per SM of
// pe_x × pe_y MACs each, HBM bandwidth, clock. Every op is one kernel on the whole GPU:
// * GEMM (batch, m, n, k): the output is cut into tiles of tm × tn (one CTA each); tiles run in
//   waves of one tile per SM: waves = ⌈batch·⌈m/tm⌉·⌈n/tn⌉ / SMs⌉. A tile takes the longer of
//   its FLOPs, 2·tm·tn·k / (SM peak · gemm_efficiency), and its operand traffic through the L2,
//   (tm + tn)·k·word bytes at the SM's share of the L2 bandwidth (glb_bandwidth_words_per_cycle ·
//   word · f / SMs): small tiles waste less of the last wave but reuse operands less. As cuBLAS's
//   heuristics do, the fastest of the tiles 256×128, 128×256, 128×128, 128×64, 64×128, 64×64 is
//   used. Floor: the operands and the result at memory_efficiency of the HBM bandwidth. A fused epilogue (bias, activation, dropout)
//   is one more memory-bound pass over the output per work item, with its own kernel overhead.
// * Element-wise, norm, softmax, dropout, embedding, loss ops: memory-bound, their bytes read and
//   written at memory_efficiency of the HBM bandwidth.
// * A scale or a (causal) mask, forward or backward, costs only its arithmetic (one operation per
//   element on the FP32 lanes), no memory pass and no kernel: cuBLAS applies the scale as the
//   GEMM's alpha and Megatron-LM's fused scale-mask-softmax kernels apply both inside the softmax
//   (masked_softmax_fusion, its default).
// * Every kernel adds kernel_overhead_s (launch, ramp and tail on the device).
// * The estimate counts the op's kernels: one, plus one per epilogue, none for folded work. The
//   framework charges the host (PyTorch eager, Megatron's Python) the architecture's
//   host_kernel_s for each. Counting kernels, not graph ops, keeps the host's work the same
//   whether an epilogue is fused into its GEMM (t = 1) or stands alone behind the all-reduce
//   (t > 1), as Megatron runs the same Python ops either way. It issues ahead of the device, so a pass lasts
//   max(device makespan, kernels · host_kernel_s) (layer_schedule.hpp): small ops at small batch are host-bound
//   as a whole, not each on its own.
// Parameters: the architecture's `calibration` map (fitted per device), overridden by the
// estimator's `params:`. "Single core" = one SM (the scheduler then never prefers it: kernels of
// one stream do not share the GPU).
#pragma once

#include "phaze/config/config_node.hpp"
#include "phaze/estimate/estimator.hpp"

namespace phaze::estimators {

struct GpuParameters {
  double gemm_efficiency = 0.8;
  double memory_efficiency = 0.8;
  double kernel_overhead_s = 5e-6;
  // The preset's calibration, then `overrides` (params:) on top.
  static GpuParameters For(const ArchConfig& arch, const GpuParameters& defaults,
                           const std::map<std::string, double>& overrides);
};

class GpuEstimator : public Estimator {
 public:
  explicit GpuEstimator(const ConfigNode& params);
  OpEstimate Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const override;

 private:
  std::map<std::string, double> overrides_;
};

}  // namespace phaze::estimators
