// The reference's tensor-core latency model (REFERENCE §2.2): Sunstone's search for a
// weight-stationary mapping of a GEMM onto PE array × core array × GLB, written for GEMMs.
//
// A GEMM out[N × K] += in[N × C] · w[C × K] (the batch folded into N) is tiled in six levels,
// innermost first: a register tile per PE (T), the PE array (S), a buffer tile per core (T), the
// core array (S), a GLB tile (T) and the outermost loops over DRAM (T). Sunstone builds it bottom
// up, as the reference calls it (its simba-like wrapper, threads = 8, uneven mapping off):
//   1. PE level. Spatial unrollings whose product is exactly PE_x (then PE_y) over two of the three
//      dimensions — {N, C}, {C, K} or {K, N}, the ones that multicast a tensor — with fall-backs
//      when none exists. Per unrolling, the register tiles of a search tree that grows first in the
//      dimensions the unrolling leaves "static" and stops where nothing more fits: all three
//      operand tiles together within the register capacity (no bypass in the capacity check).
//      Costed with reg ← buffer traffic at 64 words/cycle.
//   2. Core level, over register tiles in increasing EDP (pruned once a tile's EDP / cores
//      exceeds the best found): core unrollings as above over Core_x × Core_y, then the buffer
//      tiles that fit each operand's buffer, maximal ones and the unit tile. Costed without
//      bandwidth limits (the reference passes none at this step).
//   3. GLB level, over those candidates in increasing EDP, split among 8 workers by stride, each
//      stopping when candidate EDP plus an energy lower bound exceeds its best: the GLB tiles
//      whose operands fit together. Costed with all three bandwidths (64, 256, 128 words/cycle).
// At every level the loop order is the EDP-best of the three reuse classes (K innermost: inputs
// reused; N: weights; C: outputs), and latency = max(MACs / active PEs, reads / read bandwidth,
// writes / write bandwidth) over levels. The mapping with the least EDP wins; its latency in
// cycles is the estimate. Capacities are in words but, as in the reference, the byte counts
// (32-byte registers, 16·w·d-byte core buffers, the GLB) are passed as word counts.
//
// Candidate lists, stable sorts and the 8-worker split follow the reference's order, so ties and
// its order-dependent pruning resolve as its do: the 144 measured points come out exactly.
//
// Energies are Accelergy's in the reference; here they are parameters (pJ per word access:
// register, core buffer, GLB, DRAM; 2.2 pJ per MAC as Sunstone hard-codes). They only steer the
// choice of mapping.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

namespace phaze::estimators {

struct SunstoneGemm {
  std::int64_t n = 1;  // rows (batch folded in)
  std::int64_t c = 1;  // reduction
  std::int64_t k = 1;  // output columns
};

struct SunstoneHardware {
  std::int64_t pe_x = 1, pe_y = 1;
  std::int64_t core_x = 1, core_y = 1;
  std::int64_t register_words = 32;
  std::int64_t buffer_words = 1024;  // per core, per operand
  std::int64_t glb_words = 1 << 25;

  // Core_x × Core_y for `cores` as the reference lays them out: 2^⌊log2(cores)/2⌋ one way, the
  // rest the other, the longer side x (for other counts: the divisor closest below √cores).
  static std::pair<std::int64_t, std::int64_t> CoreGrid(std::int64_t cores);
};

// What the search is scored by, fixed per estimator.
struct SunstoneCosts {
  // reg ← core buffer, core buffer ← GLB, GLB ← DRAM, whole-accelerator; read and write alike.
  std::array<double, 3> words_per_cycle = {64, 256, 128};
  // pJ per word access: register, core buffer, GLB, DRAM. Eyeriss's normalised costs (RF 1×,
  // array 2×, GLB 6×, DRAM 200× a MAC; Chen et al., ISCA 2016) at Sunstone's 2.2 pJ MAC. With
  // them the search reproduces every measured point in REFERENCE §2.2; the reference's own
  // Accelergy values were not available (its measurements used placeholders).
  std::array<double, 4> access_pj = {2.2, 4.4, 13.2, 440.0};
  double mac_pj = 2.2;
};

struct SunstoneMapping {
  bool found = false;  // false: no mapping fits (the reference's estimate is then infinite)
  double cycles = 0;
  double energy_pj = 0;
  // Loop bounds {N, C, K} per level, innermost first: register, PE array, core buffer, core
  // array, GLB, DRAM.
  std::array<std::array<std::int64_t, 3>, 6> levels{};
  // The latency's terms, cycles = their max: MACs / active PEs, then the traffic of each level
  // from the one above over its bandwidth (registers ← buffer, buffer ← GLB, GLB ← DRAM).
  std::array<double, 4> bound_cycles{};
  std::int64_t mappings_costed = 0;
};

// Sunstone's bottom-up tiling of a GEMM level (exposed for tests): the unit tile, then every
// tile of `bound` — each dimension a divisor of its bound — that fits while none of its children
// (one dimension at its next divisor) does, in the order of the reference's breadth-first walk
// from the unit tile; empty when the unit tile does not fit. `fits` must hold for every tile below
// one it holds for (capacity tests do).
std::vector<std::array<std::int64_t, 3>> SunstoneMaximalTiles(
    const std::array<std::int64_t, 3>& bound,
    const std::function<bool(const std::array<std::int64_t, 3>&)>& fits);

// The search, and a memo of its cycles keyed by the GEMM and the hardware (thread-safe).
class SunstoneMapper {
 public:
  explicit SunstoneMapper(SunstoneCosts costs = {}) : costs_(costs) {}

  static SunstoneMapping Search(const SunstoneGemm& gemm, const SunstoneHardware& hw,
                                const SunstoneCosts& costs);

  // Search's cycles, memoised; +∞ when no mapping fits.
  double Cycles(const SunstoneGemm& gemm, const SunstoneHardware& hw) const;

  // A lower bound on Search(gemm, hw', costs).cycles for every hw' that differs from `hw` at most
  // in its GLB (glb_words is ignored): the least over stages 1–2's candidates, which do not
  // depend on the GLB, of what stage 3 could make of each — compute and the registers' traffic
  // exactly, the buffers' traffic with the whole remaining loops as GLB tile, and every DRAM word
  // moved once (the .cpp says why each holds). Stages 1–2 only: a few times cheaper than a search
  // for the GEMMs the searches meet; +∞ exactly when no GLB gives a mapping for want of a
  // core-level one. What a family's bound asks for (Estimator::EstimateLowerBound).
  static double Floor(const SunstoneGemm& gemm, const SunstoneHardware& hw,
                      const SunstoneCosts& costs);
  // Floor, memoised alongside Cycles.
  double FloorCycles(const SunstoneGemm& gemm, const SunstoneHardware& hw) const;

 private:
  // About 60 MB of entries; the memo starts over when full. A floor's key has GLB −1.
  static constexpr std::size_t kMemoEntries = 1 << 19;
  SunstoneCosts costs_;
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                         std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  mutable std::mutex mutex_;
  mutable std::map<Key, double> memo_;
};

}  // namespace phaze::estimators
