// DESIGN §8's estimator (the search's default until the device model of DESIGN §11,
// framework/include/phaze/estimate/device_model.hpp), registered as "analytic" (model: physical)
// and as "sunstone" (model: sunstone, reproducing the reference's Sunstone tensor-core cycles and
// vector-core table).
//
// physical, one op on `c` cores (1 for ℓ_i, all cores of the class for ℓ̂_i), seconds = cycles/f:
// * GEMM {B, M, N, K} on a weight-stationary pe_x × pe_y array (K along pe_x, N along pe_y): per
//   core, compute = B·⌈K/pe_x⌉·⌈N/pe_y⌉·max(M, pe_x) + pe_x + pe_y cycles (stream M rows through
//   each weight tile while the next tile's weights load, a row per cycle; one fill and drain).
//   Bounded by three memory levels:
//     L2 → array: B·(M·K·⌈N/pe_y⌉ + K·N + M·N·(2⌈K/pe_x⌉ − 1)) words at l2_words_per_cycle
//       (default pe_x + 2·pe_y per core: an input row and a partial-sum row in and out);
//     GLB → L2: the traffic of the best blocking whose weight block fills half the L2, at the
//       GLB bandwidth divided among the c cores;
//     HBM → GLB: only the weights when the working set fits the GLB, else the best blocking with
//       half the GLB, at the HBM bandwidth.
//   All cores: the GEMM is split over its batch, M or N (the fastest), and never does worse than
//   one core (an op may leave cores idle).
// * Vector op: Σ cycles_per_element(function)·⌈elements/lanes⌉ (lanes = pe_vc per core) against
//   the memory term bytes / min(GLB bandwidth, 3 words per lane per cycle), plus HBM when the
//   bytes exceed the GLB.
// * Fused op: the epilogue runs on the paired vector core(s) while the GEMM streams;
//   latency = max(tensor, vector) + vector / (output tiles) (the last tile's epilogue is exposed).
// * Collectives: the ring model. Area: the 22 nm model (share/area/22nm.yaml).
//
// sunstone: tensor cycles are those of the mapping Sunstone's search finds (sunstone_mapper.hpp,
// REFERENCE §2.2) on the op's GEMM with the batch folded into the rows: the reference's PE array,
// core grid (2^⌊log2(cores)/2⌋ one way) and three whole-accelerator bandwidths, and its capacities
// (32-byte registers, the per-core buffer and the GLB, byte counts used as word counts); a GEMM no
// mapping fits is unsupported (the reference costs it infinite); all cores never cost more than
// one (the search's EDP-best multi-core mapping can be slower). A fused op adds the reference's
// per-op cycle constants of its epilogue (unscaled, as the reference does); vector ops use the
// reference's closed-form table (REFERENCE §2.3, GELU at 1 cycle, no memory term).
// Time is cycles / frequency in seconds (the reference's ms/s mix-up is not reproduced).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "phaze/core/config_node.hpp"
#include "phaze/estimate/estimator.hpp"
#include "sunstone_mapper.hpp"

namespace phaze::estimators {

class AnalyticEstimator : public Estimator {
 public:
  enum class Model { kPhysical, kSunstone };
  // params: {model: physical|sunstone, l2_words_per_cycle: 0, vector_cycles: {function: cycles},
  //          register_bytes: 32, access_pj: [register, buffer, GLB, DRAM]} (the last two: sunstone)
  AnalyticEstimator(Model model, const ConfigNode& params);

  OpEstimate Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const override;
  // sunstone: tensor cycles from SunstoneMapper::FloorCycles (what the search cannot go below at
  // any GLB size), which costs stages 1–2 of the search and not its GLB stage; else Estimate.
  OpEstimate EstimateLowerBound(const OpWork& op, const ArchConfig& arch,
                                Pass pass) const override;

 private:
  double TensorCycles(const GemmShape& s, bool weight_operand, const ArchConfig& a,
                      std::int64_t cores, double glb_words_per_cycle) const;
  double HbmSeconds(const GemmShape& s, bool weight_operand, const ArchConfig& a) const;
  double PhysicalGemmSeconds(const OpWork& op, const ArchConfig& a, bool all_cores) const;
  double VectorSeconds(const OpWork& op, const ArchConfig& a, std::int64_t cores,
                       bool include_memory) const;
  OpEstimate EstimateOp(const OpWork& op, const ArchConfig& a, bool floor) const;
  double SunstoneTensorCycles(const OpWork& op, const ArchConfig& a, std::int64_t cores,
                              bool floor) const;
  double SunstoneVectorCycles(const OpWork& op, std::int64_t lanes) const;
  double CyclesPerElement(const OpWork& op, const std::string& function) const;

  Model model_;
  double l2_words_per_cycle_ = 0;
  std::map<std::string, double> vector_cycles_;
  std::int64_t register_bytes_ = 32;
  std::unique_ptr<SunstoneMapper> mapper_;
};

}  // namespace phaze::estimators
