// The device model (DESIGN §11): one physics for every chip the template can express — the
// paper's hypothetical accelerators, the TPUv4-like baseline, a real TPUv4, an A100, an H100 —
// stated in the template's own terms and calibrated on measured runs (share/validation/).
// Registered as the `device` estimator (the search's default) and, for the GPU planner's
// configs, as `gpu` (plugins/estimators/device/).
//
// Terms. A *core group* is the tensor cores that share a vector core: an SM (A100: 4 tensor cores
// of 16×16 and 64 FP32 lanes), a TPU TensorCore (4 MXUs of 128×128 and a vector unit). With
// g = max(1, ⌊num_tc / num_vc⌋) tensor cores per group there are G = ⌊num_tc / g⌋ groups; a chip
// with at least as many vector cores as tensor cores has one tensor core per group. The g arrays
// of a group form a gm × gn grid (gn the largest divisor of g not above √g).
//
// GEMM (batch, m, n, k), one kernel:
// * Tiles. The output is cut into tiles of tm × tn = (a·pe_x·gm) × (b·pe_y·gn): every tensor core
//   of the group computes a × b array-sized blocks of the tile, (a, b) ∈ {2×2, 2×4, 4×2, 4×4,
//   4×8, 8×4} (on the A100 these are cuBLAS's CTA tiles 64×64 … 256×128). A tile is allowed when
//   its operands, double-buffered in k-slices of pe_x, fit a tensor core's buffer:
//   2·(a·pe_x + b·pe_y)·pe_x·word ≤ l2_tc_bytes (the 2×2 tile always is).
// * Waves. Tiles run in waves of one per group: with T = batch·⌈m/tm⌉·⌈n/tn⌉ tiles,
//   q·⌈T/G⌉ + (1 − q)·T/G waves, q = wave_quantization. q = 1 (the default): whole waves, the
//   last one's spare groups idle (the paper's template, the A100's cuBLAS kernels as fitted);
//   q = 0: the tiles' work spread evenly over the groups, as Hopper's stream-K GEMMs split the
//   reduction of a partial wave's tiles (fitted on an H200: share/validation/kernels/).
// * A tile lasts the longer of its arithmetic, 2·tm·tn·k' / (group peak · gemm_efficiency) with
//   k' = ⌈k/pe_x⌉·pe_x (the reduction fills whole array rows), and its operand traffic through
//   the GLB, (tm + tn)·k·word bytes at the group's share of the GLB bandwidth
//   (glb_bandwidth_words_per_cycle · word · f / G). The fastest allowed tile is used, as cuBLAS's
//   heuristics and XLA's tiling do.
// * Floor: the HBM traffic at memory_efficiency of its bandwidth: the operands and the result
//   once when they fit, else, for a GLB of S words, the re-reads of a blocked GEMM,
//   batch·(2·m·n·k/√S + m·n) words (the Hong–Kung bound) when that is larger.
// * A weight GEMM with an odd n or k (an unpadded vocabulary's LM head: rows not aligned for the
//   tensor cores' loads) reaches unaligned_gemm_efficiency of the peak, not gemm_efficiency (the
//   library's fallback kernels, about the chip's rate without tensor cores; measured on an H200).
// * A fused epilogue (bias, activation, dropout) is one more pass over the output per work item,
//   each a vector op of its own (below) and a kernel of its own.
// * A GEMM that writes no bytes keeps its result on chip (FlashAttention's scores,
//   graph/attention_kernel.hpp): its HBM traffic is its operands once, its epilogues lane work.
// * Fused attention (OpWork::attention_kernel: the GEMMs and lane work of a FlashAttention kernel,
//   causal tiles already skipped by graph/attention_kernel.hpp): its GEMMs read their operands
//   once and reach attention_efficiency (attention_backward_efficiency in the backward pass)
//   instead of gemm_efficiency (the kernel's own tiles and pipelining: fitted on cuDNN's fused
//   attention, share/validation/kernels/); its lane work
//   (the online softmax, `flash_softmax`, and its backward) runs between them, as measured
//   kernels' times say (a sum, not hidden), and launches no kernel of its own.
// * FP8 (OpWork::fp8, graph/precision.hpp): the arithmetic at fp8_tensor_ratio × the peak (an
//   architecture without it refuses the op), operands through the GLB at 1 byte, the weight read
//   as its FP8 copy (half its 16-bit bytes), and the 16-bit inputs not yet FP8 cast by a kernel of
//   their own: fp8_cast_elements read in 16 bits and written in 8 at memory_efficiency of the HBM
//   bandwidth. Under current scaling (training.fp8_recipe tensorwise) the operands' amax, cast
//   and transposed-copy passes instead (OpWork::fp8_scaling_bytes, two kernels). In the backward
//   pass the arithmetic runs at fp8_exact_accumulation of that rate (exact accumulation, as TE
//   and torchao run their gradient GEMMs). Energy per MAC stays the 16-bit figure (no FP8 energy
//   data here).
// Vector op (element-wise, norm, softmax, loss, embedding, optimizer), one kernel: the longer of
//   its bytes at memory_efficiency of the HBM bandwidth and its arithmetic,
//   Σ cycles(function)·⌈elements / lanes⌉ / f on the num_vc · pe_vc lanes (vector_cycles.hpp).
//   A multi-kernel op (OpWork::extra_kernels: Megatron-LM's FP32 cross-entropy,
//   graph/loss_kernel.hpp) has its temporaries' passes in its bytes and launches each kernel.
// Folded work: a scale or a (causal) mask, forward or backward, costs only its arithmetic (one
//   operation per element on the lanes), no memory pass and no kernel: the scale is the GEMM's
//   alpha and fused scale-mask-softmax kernels apply both inside the softmax.
// Every kernel costs kernel_overhead_s on the device (launch, ramp, tail); the estimate counts
//   kernels so the framework can charge the host's issue time (host_kernel_s, layer_schedule.hpp).
//
// One core (ℓ_i in the layer ILP). concurrent_kernels = 1 (the paper's template: independent ops
//   may run side by side on disjoint cores): the op on one tensor core (or one vector core) with
//   its 1/num_tc (1/num_vc) share of the GLB and HBM bandwidth, tiles of one array grid 1 × 1.
//   concurrent_kernels = 0 (a GPU under one CUDA stream, a TPU running one XLA op at a time):
//   the estimate is exclusive (OpEstimate::exclusive: the layer's ops run one at a time on the
//   whole device); single = all-cores time × G for a GEMM (one group's time) and × num_vc
//   for any other op (one vector core's), reported but not scheduled.
//
// Technology parameters (DeviceTechnology): the defaults are the A100's, fitted on measured runs
// by share/validation/fit.py, and shared by every template chip (a hypothetical chip gets the
// realism of a real one); a preset's `calibration` map overrides them, an estimator's `params:`
// override both.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "phaze/arch/arch_config.hpp"
#include "phaze/arch/technology.hpp"
#include "phaze/estimate/estimator.hpp"

namespace phaze {

// DeviceTechnology (arch/technology.hpp) for `arch`: defaults, then arch.calibration, then
// `overrides`; an UnsupportedOpError on a value out of range (efficiencies in (0, 1], overhead
// finite and ≥ 0, concurrent_kernels 0 or 1).
DeviceTechnology DeviceTechnologyFor(const ArchConfig& arch,
                                     const std::map<std::string, double>& overrides = {});


// One output tile of a GEMM on one core group (or one tensor core).
struct GemmTile {
  std::int64_t tm = 0;
  std::int64_t tn = 0;
};

// The tiles a unit may use, at most one per block shape: held in place (GEMMs are estimated in
// the search's inner loops, where a vector per estimate showed in the profile).
struct GemmTiles {
  static constexpr std::size_t kMax = 6;
  std::array<GemmTile, kMax> tiles{};
  std::size_t count = 0;
  const GemmTile* begin() const { return tiles.data(); }
  const GemmTile* end() const { return tiles.data() + count; }
  std::size_t size() const { return count; }
};

class DeviceModel {
 public:
  // `vector_cycles` overrides the shared cycle table (vector_cycles.hpp); `name` is the
  // estimator's registered name, for error messages.
  DeviceModel(std::string name, std::map<std::string, double> overrides,
              std::map<std::string, double> vector_cycles);

  // `pass`: a fused attention kernel's GEMMs in the backward pass run at the backward kernel's
  // efficiency (the forward's, re-run by recomputation, at the forward's).
  OpEstimate Estimate(const OpWork& op, const ArchConfig& arch, Pass pass = Pass::kForward) const;

  // The mapping, exposed for tests and tools.
  static std::int64_t TensorCoresPerGroup(const ArchConfig& a);
  static std::int64_t Groups(const ArchConfig& a);
  // The tiles allowed on a unit of `cores_per_unit` tensor cores (a group, or 1).
  static GemmTiles Tiles(const ArchConfig& a, std::int64_t cores_per_unit);
  // Compute time of a GEMM on `units` units of `cores_per_unit` tensor cores, each with
  // `glb_share` of the GLB bandwidth: min over tiles of waves · tile time, with `tech`'s
  // gemm_efficiency and wave_quantization. Also returns the tile.
  // An FP8 GEMM: `rate` = fp8_tensor_ratio times the arithmetic, operands of `word` = 1 byte
  // (0: the architecture's word).
  static double GemmComputeSeconds(const GemmShape& g, const ArchConfig& a,
                                   std::int64_t cores_per_unit, std::int64_t units,
                                   double glb_share, const DeviceTechnology& tech,
                                   GemmTile* chosen = nullptr, double rate = 1,
                                   std::int64_t word = 0);
  // The tensor cores' clock under arch.power_limit_w, relative to the calibration's at arch.tdp_w
  // (1 without a limit, or at or above the TDP). A GEMM that fills the tensor cores is power-bound
  // at the TDP; under a lower limit its dynamic power, P − P_static ∝ f·V², gets
  // ρ = (limit − P_static) / (TDP − P_static) of what it had. While the voltage follows the clock
  // (V ∝ f: P ∝ f³) the clock falls by ∛ρ; below the energy model's voltage_floor_clock f_v the
  // voltage stays at its floor (P ∝ f·f_v²) and the clock falls as ρ / f_v², the two meeting at
  // f_v. P_static is the energy model's (EnergyModel::StaticPowerW). Memory-bound kernels draw
  // less and keep their speed.
  static double PowerLimitClockScale(const ArchConfig& a);
  // The tensor cores' supply voltage under the limit, relative to the TDP's: the clock, or the
  // floor below it (1 without a limit). Switching energy scales with its square (EnergyModel).
  static double PowerLimitVoltageScale(const ArchConfig& a);
  // Whether a vector function is folded into a neighbouring kernel (a scale or a mask).
  static bool Folded(const std::string& function);
  // HBM bytes of a GEMM given the GLB (operands and result once, or the blocked re-reads).
  static double GemmHbmBytes(const GemmShape& g, const ArchConfig& a, double op_bytes);

 private:
  double LaneSeconds(const OpWork& op, const std::string& function, std::int64_t elements,
                     const ArchConfig& a, std::int64_t lanes) const;
  std::string name_;
  std::map<std::string, double> overrides_;
  std::map<std::string, double> vector_cycles_;
};

}  // namespace phaze
