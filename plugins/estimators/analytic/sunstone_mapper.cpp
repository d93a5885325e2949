#include "sunstone_mapper.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <vector>

namespace phaze::estimators {

namespace {

using i64 = std::int64_t;
using Dims = std::array<i64, 3>;  // {N, C, K}
constexpr int kN = 0, kC = 1, kK = 2;
constexpr int kMaskN = 1 << kN, kMaskC = 1 << kC, kMaskK = 1 << kK, kAllDims = 7;

// The dimension that does not index each operand (inputs, weights, outputs), so reuses it.
constexpr std::array<int, 3> kReuseDim = {kK, kN, kC};
// Sunstone's unrolling principle: unroll the two dimensions that reuse the *other* two operands;
// the operand they do not reuse names the unrolling (0 inputs, 1 weights, 2 outputs).
constexpr std::array<int, 3> kUnrollDims = {kMaskN | kMaskC, kMaskC | kMaskK, kMaskK | kMaskN};
// The register tile's search tree grows first in the dimensions the operand's promising loop
// orders leave non-static: all but K for inputs, all but N for weights, all but C for outputs.
constexpr std::array<int, 3> kRegisterGraph = {kMaskN | kMaskC, kMaskC | kMaskK, kMaskN | kMaskK};

i64 Prod(const Dims& d) { return d[0] * d[1] * d[2]; }
Dims Mul(const Dims& a, const Dims& b) { return {a[0] * b[0], a[1] * b[1], a[2] * b[2]}; }
Dims Div(const Dims& a, const Dims& b) { return {a[0] / b[0], a[1] / b[1], a[2] / b[2]}; }
constexpr Dims kOnes = {1, 1, 1};

// Operand tile sizes in words: inputs N·C, weights C·K, outputs N·K.
std::array<i64, 3> Sizes(const Dims& d) {
  return {d[kN] * d[kC], d[kC] * d[kK], d[kN] * d[kK]};
}
i64 SizeSum(const Dims& d) {
  const auto s = Sizes(d);
  return s[0] + s[1] + s[2];
}

// Divisors of v in increasing order (cached per thread: the search asks for the same few).
const std::vector<i64>& Divisors(i64 v) {
  thread_local std::unordered_map<i64, std::vector<i64>> cache;
  auto [it, inserted] = cache.try_emplace(v);
  if (inserted) {
    auto& f = it->second;
    for (i64 d = 1; d * d <= v; ++d) {
      if (v % d != 0) continue;
      f.push_back(d);
      if (d != v / d) f.push_back(v / d);
    }
    std::sort(f.begin(), f.end());
  }
  return it->second;
}

// The divisor lattice of a bound, nodes as indices into each dimension's divisors: a node's
// child in a dimension takes its next larger divisor. Tracks which nodes a walk has visited.
using Index = std::array<int, 3>;
class Lattice {
 public:
  explicit Lattice(const Dims& bound)
      : f_{&Divisors(bound[0]), &Divisors(bound[1]), &Divisors(bound[2])},
        visited_(f_[0]->size() * f_[1]->size() * f_[2]->size(), 0) {}
  Dims Value(const Index& i) const { return {(*f_[0])[i[0]], (*f_[1])[i[1]], (*f_[2])[i[2]]}; }
  bool Child(const Index& node, int d, Index* child) const {
    if (node[d] + 1 >= static_cast<int>(f_[d]->size())) return false;
    *child = node;
    ++(*child)[d];
    return true;
  }
  bool Maxed(const Index& node, int d) const {
    return node[d] + 1 == static_cast<int>(f_[d]->size());
  }
  // True the first time a node is visited.
  bool Visit(const Index& n) {
    char& v = visited_[(n[0] * f_[1]->size() + n[1]) * f_[2]->size() + n[2]];
    if (v != 0) return false;
    v = 1;
    return true;
  }

 private:
  std::array<const std::vector<i64>*, 3> f_;
  std::vector<char> visited_;
};

// A breadth-first queue of lattice nodes.
class Queue {
 public:
  explicit Queue(const Index& first) : nodes_{first} {}
  bool Empty() const { return head_ == nodes_.size(); }
  Index Pop() { return nodes_[head_++]; }
  void Push(const Index& n) { nodes_.push_back(n); }

 private:
  std::vector<Index> nodes_;
  size_t head_ = 0;
};
constexpr Index kRoot = {0, 0, 0};

// pass_prior: the prioritised dimensions are all at their largest factor, or their product is
// at least the others'.
bool PassPrior(const Index& node, const Lattice& lattice, int prior) {
  bool maxed = true;
  for (int d = 0; d < 3; ++d) {
    if ((prior >> d & 1) && !lattice.Maxed(node, d)) maxed = false;
  }
  if (maxed) return true;
  const Dims v = lattice.Value(node);
  i64 prior_bounds = 1, other_bounds = 1;
  for (int d = 0; d < 3; ++d) ((prior >> d & 1) ? prior_bounds : other_bounds) *= v[d];
  return prior_bounds >= other_bounds;
}

// bottom_up_spatial: the unrollings over `traversed` whose product is exactly `exact`; with
// max_util off, also those that cannot grow within it (product above min_occ).
std::vector<Dims> SpatialNodes(const Dims& bound, i64 exact, int traversed, bool max_util,
                               int prior = 0, i64 min_occ = 0) {
  Lattice lattice(bound);
  Queue queue(kRoot);
  std::vector<Dims> out;
  while (!queue.Empty()) {
    const Index node = queue.Pop();
    const i64 total = Prod(lattice.Value(node));
    if (total == exact) {
      out.push_back(lattice.Value(node));
    } else if (total < exact) {
      bool overflow = true;
      for (int d = 0; d < 3; ++d) {
        Index child;
        if (!(traversed >> d & 1) || !lattice.Child(node, d, &child)) continue;
        if (Prod(lattice.Value(child)) > exact) continue;
        overflow = false;
        if (lattice.Visit(child) && (prior == 0 || PassPrior(child, lattice, prior)))
          queue.Push(child);
      }
      if (!max_util && overflow && total > min_occ) out.push_back(lattice.Value(node));
    }
  }
  return out;
}

// When no unrolling over the operand's dimensions uses the whole axis: those that use most of
// it, plus full ones over any dimensions that favour the operand's (else the largest of any).
std::vector<Dims> SpatialFallback(const Dims& bound, i64 exact, int dims) {
  std::vector<Dims> out = SpatialNodes(bound, exact, dims, false);
  i64 min_occ = std::numeric_limits<i64>::max();
  for (const Dims& e : out) min_occ = std::min(min_occ, Prod(e));
  auto mixed = SpatialNodes(bound, exact, kAllDims, true, dims);
  if (mixed.empty()) mixed = SpatialNodes(bound, exact, kAllDims, false, 0, min_occ);
  out.insert(out.end(), mixed.begin(), mixed.end());
  return out;
}

struct Unroll {
  Dims sp;       // x · y unrolling per dimension
  int operand;   // which operand's principle produced it
};

// enumerate_spatial over an x × y array.
std::vector<Unroll> Unrollings(const Dims& bound, i64 x, i64 y) {
  std::vector<Unroll> out;
  std::array<std::set<Dims>, 3> seen;
  for (int run = 1; out.empty() && run <= 2; ++run) {
    for (int t = 0; t < 3; ++t) {
      const int dims = kUnrollDims[t];
      auto xs = SpatialNodes(bound, x, dims, true);
      if (xs.empty()) {
        if (run == 1) continue;
        xs = SpatialFallback(bound, x, dims);
      }
      for (const Dims& sx : xs) {
        const Dims rest = Div(bound, sx);
        auto ys = SpatialNodes(rest, y, dims, true);
        if (ys.empty()) ys = SpatialFallback(rest, y, dims);
        for (const Dims& sy : ys) {
          const Dims sp = Mul(sx, sy);
          if (seen[t].insert(sp).second) out.push_back({sp, t});
        }
      }
    }
  }
  return out;
}

// bottom_up_static: register tiles (all three operands within `capacity`), grown in `graph`'s
// dimensions and in others only when none of those fits; the nodes where nothing fits.
std::vector<Dims> RegisterTiles(const Dims& bound, i64 capacity, int graph) {
  Lattice lattice(bound);
  Queue queue(kRoot);
  std::vector<Dims> out;
  while (!queue.Empty()) {
    const Index node = queue.Pop();
    std::array<Index, 3> child{};
    std::array<bool, 3> has{}, fits{}, marked{};
    for (int d = 0; d < 3; ++d) {
      has[d] = lattice.Child(node, d, &child[d]);
      fits[d] = has[d] && SizeSum(lattice.Value(child[d])) <= capacity;
    }
    bool overflow = true;
    for (int d = 0; d < 3; ++d) {
      if ((graph >> d & 1) && fits[d]) overflow = false, marked[d] = true;
    }
    if (overflow) {
      for (int d = 0; d < 3; ++d) {
        if (fits[d]) overflow = false, marked[d] = true;
      }
    }
    if (overflow) out.push_back(lattice.Value(node));
    for (int d = 0; d < 3; ++d) {
      // A child is marked visited even when this parent does not expand it.
      if (has[d] && lattice.Visit(child[d]) && marked[d]) queue.Push(child[d]);
    }
  }
  return out;
}

// bottom_up: the unit tile and every tile that fits but none of whose children does, keeping
// only those that fit. The reference walks the divisor lattice breadth first from the unit tile,
// children in dimension order; `fits` holds for every tile below one it holds for (a capacity
// test), so the tiles that fit are a down-set, the walk meets all of them, and it meets each
// depth (index sum) in decreasing lexicographic order of the indices. Here the down-set is read
// by its height in the last dimension over the other two, and its maximal tiles sorted into the
// walk's order: the same list (SunstoneMapper.MaximalTilesAreTheBreadthFirstWalks checks it
// against the walk), with a few `fits` calls per column instead of three per tile — stage 3
// asks for thousands of GLB tilings per search.
template <typename Fits>
std::vector<Dims> MaximalTiles(const Dims& bound, const Fits& fits) {
  if (!fits(kOnes)) return {};
  const std::array<const std::vector<i64>*, 3> f = {&Divisors(bound[0]), &Divisors(bound[1]),
                                                     &Divisors(bound[2])};
  const int n0 = static_cast<int>(f[0]->size()), n1 = static_cast<int>(f[1]->size());
  const int n2 = static_cast<int>(f[2]->size());
  // height[i0 · n1 + i1]: the largest i2 whose tile fits, −1 when none does. It never grows
  // with i0 or i1, so each column starts its scan at the least of its two neighbours' heights.
  thread_local std::vector<int> height;
  height.assign(static_cast<size_t>(n0 * n1), -1);
  auto at = [&](int i0, int i1) -> int& { return height[static_cast<size_t>(i0 * n1 + i1)]; };
  for (int i0 = 0; i0 < n0; ++i0) {
    for (int i1 = 0; i1 < n1; ++i1) {
      int top = n2 - 1;
      if (i0 > 0) top = std::min(top, at(i0 - 1, i1));
      if (i1 > 0) top = std::min(top, at(i0, i1 - 1));
      while (top >= 0 && !fits(Dims{(*f[0])[i0], (*f[1])[i1], (*f[2])[top]})) --top;
      at(i0, i1) = top;
    }
  }
  // Maximal: on top of its column, and neither neighbouring column reaches as high.
  std::vector<std::array<int, 3>> maximal;
  for (int i0 = 0; i0 < n0; ++i0) {
    for (int i1 = 0; i1 < n1; ++i1) {
      const int i2 = at(i0, i1);
      if (i2 < 0) break;  // nor does any column further on in i1
      if ((i0 + 1 == n0 || at(i0 + 1, i1) < i2) && (i1 + 1 == n1 || at(i0, i1 + 1) < i2)) {
        maximal.push_back({i0, i1, i2});
      }
    }
  }
  std::sort(maximal.begin(), maximal.end(), [](const auto& a, const auto& b) {
    const int da = a[0] + a[1] + a[2], db = b[0] + b[1] + b[2];
    return da != db ? da < db : a > b;
  });
  std::vector<Dims> out{kOnes};
  for (const auto& m : maximal) out.push_back({(*f[0])[m[0]], (*f[1])[m[1]], (*f[2])[m[2]]});
  return out;
}

}  // namespace

std::vector<std::array<std::int64_t, 3>> SunstoneMaximalTiles(
    const std::array<std::int64_t, 3>& bound,
    const std::function<bool(const std::array<std::int64_t, 3>&)>& fits) {
  return MaximalTiles(bound, fits);
}

namespace {

// A mapping as levels of loop bounds, innermost first, each temporal or spatial.
struct Tile {
  std::array<Dims, 6> d{};
  std::array<bool, 6> spatial{};
  int levels = 0;
  void Push(const Dims& bounds, bool is_spatial) {
    d[levels] = bounds;
    spatial[levels] = is_spatial;
    ++levels;
  }
  i64 SpatialCount() const {
    i64 n = 1;
    for (int l = 0; l < levels; ++l) {
      if (spatial[l]) n *= Prod(d[l]);
    }
    return n;
  }
  Dims InnerProduct(int through) const {
    Dims p = kOnes;
    for (int l = 0; l <= through; ++l) p = Mul(p, d[l]);
    return p;
  }
};

struct OperandAccess {
  double own = 0;  // accesses at this level
  double up = 0;   // reads from the level above (after multicast over the next spatial level)
};
struct OutputAccess {
  double updates = 0, writes = 0;   // at this level: updates, and updates less the first fills
  double up_updates = 0, up_reads = 0;  // at the level above
};
// One memory level's accesses under each of the three reuse classes of loop order, in the
// order Sunstone lists them: K innermost (inputs reused), N (weights), C (outputs).
struct LevelAccess {
  std::array<std::array<OperandAccess, 2>, 3> in;
  std::array<OutputAccess, 3> out;
};

// get_accesses: per temporal level, every operand's tile size times the iterations of all outer
// levels, divided by the reuse the order gets from the next temporal level's loop, and by the
// multicast of a spatial level right above.
std::vector<LevelAccess> Accesses(const Tile& t, const Dims& bound) {
  std::vector<LevelAccess> out;
  const double full_out = static_cast<double>(bound[kN] * bound[kK]);
  for (int lev = 0; lev + 1 < t.levels; ++lev) {
    if (t.spatial[lev]) continue;
    Dims outer = kOnes;
    for (int l = lev + 1; l < t.levels; ++l) outer = Mul(outer, t.d[l]);
    const auto sizes = Sizes(t.InnerProduct(lev));
    const bool spatial_next = t.spatial[lev + 1];
    const Dims& r = t.d[spatial_next ? lev + 2 : lev + 1];
    const i64 iterations = Prod(outer);
    std::array<double, 3> multicast{1, 1, 1};
    if (spatial_next) {
      for (int i = 0; i < 3; ++i) multicast[i] = static_cast<double>(t.d[lev + 1][kReuseDim[i]]);
    }
    auto reused = [&](int operand, i64 factor) {
      return std::trunc(static_cast<double>(sizes[operand] * iterations) /
                        static_cast<double>(factor));
    };
    // With no reuse loop of its own in the order, an operand is still reused when the next
    // level's only loops are its reuse dimensions (Sunstone's "non_ones" rule; not for inputs,
    // whose reuse strings end in a sliding-window dimension).
    const bool only_n = r[kC] == 1 && r[kK] == 1, only_c = r[kN] == 1 && r[kK] == 1;
    const double in_k = reused(0, r[kK]), in_none = reused(0, 1);
    const double w_n = reused(1, r[kN]), w_none = reused(1, only_n ? r[kN] : 1);
    const double o_c = reused(2, r[kC]), o_none = reused(2, only_c ? r[kC] : 1);
    const std::array<std::array<double, 3>, 3> classes = {
        std::array<double, 3>{in_k, w_none, o_none},
        std::array<double, 3>{in_none, w_n, o_none},
        std::array<double, 3>{in_none, w_none, o_c}};
    LevelAccess level;
    for (int c = 0; c < 3; ++c) {
      for (int i = 0; i < 2; ++i) {
        level.in[c][i] = {classes[c][i], std::trunc(classes[c][i] / multicast[i])};
      }
      const double u = classes[c][2], us = std::trunc(u / multicast[2]);
      level.out[c] = {u, u - full_out, us, us - full_out};
    }
    out.push_back(level);
  }
  return out;
}

struct Cost {
  double edp = 0, cycles = 0, energy = 0;
  std::array<double, 4> terms{};  // compute, then each level's traffic / bandwidth
  bool operator<(const Cost& o) const {
    return std::tie(edp, cycles, energy) < std::tie(o.edp, o.cycles, o.energy);
  }
};

// get_cost_edp_bypass with registers holding weights only. `levels_e` access energies are
// used (register, buffer, GLB, DRAM: one more than the memory levels costed); `bandwidth`
// (nullptr: none) caps each level's traffic from the level above.
Cost Evaluate(const Tile& t, const Dims& bound, const SunstoneCosts& costs, int levels_e,
              const double* bandwidth) {
  const auto acc = Accesses(t, bound);
  const double macs = static_cast<double>(Prod(bound));
  const double full_out = static_cast<double>(bound[kN] * bound[kK]);
  const auto& e = costs.access_pj;
  double cycles = macs / static_cast<double>(t.SpatialCount());
  std::array<double, 4> terms{cycles, 0, 0, 0};
  // Operand reads at the MACs: weights from the registers, inputs and outputs (bypassing the
  // registers) from the core buffer, less the multicast of the PE array.
  const auto& first = acc[0];
  double operand_e = 0;
  operand_e += macs * e[1] / (first.in[0][0].own / first.in[0][0].up);
  operand_e += macs * e[0];
  operand_e +=
      (macs + (macs - full_out)) * e[1] / (first.out[0].updates / first.out[0].up_updates);
  double energy = macs * costs.mac_pj + operand_e;
  for (size_t lev = 0; lev < acc.size() && static_cast<int>(lev) + 1 < levels_e; ++lev) {
    const double here = e[lev], above = e[lev + 1];
    // Inputs and outputs bypass the registers: nothing is costed for them at level 0.
    const double io_here = lev == 0 ? 0 : here, io_above = lev == 0 ? 0 : above;
    double best_cost = 0, best_e = 0, best_cycles = 0, best_term = 0;
    for (int c = 0; c < 3; ++c) {
      const auto& in = acc[lev].in[c];
      const auto& o = acc[lev].out[c];
      double level_e = 0, reads = 0, writes = 0;
      level_e += io_here * in[0].own;
      level_e += io_above * in[0].up;
      reads += in[0].up;
      level_e += here * in[1].own;
      level_e += above * in[1].up;
      reads += in[1].up;
      level_e += io_here * o.writes;
      level_e += io_above * o.up_reads;
      level_e += io_above * o.up_updates;
      writes += o.up_updates;
      reads += o.up_reads;
      double level_cycles = cycles, term = 0;
      if (bandwidth != nullptr) {
        term = std::max(reads / bandwidth[lev], writes / bandwidth[lev]);
        level_cycles = std::max(term, level_cycles);
      }
      const double cost = (energy + level_e) * level_cycles;
      if (c == 0 || cost < best_cost) {
        best_cost = cost, best_e = level_e, best_cycles = level_cycles, best_term = term;
      }
    }
    energy += best_e;
    cycles = std::max(cycles, best_cycles);
    terms[lev + 1] = best_term;
  }
  return {energy * cycles, cycles, energy, terms};
}

struct Candidate {
  Tile tile;
  Cost cost;
};

std::vector<size_t> SortedBy(const std::vector<Candidate>& cands, bool edp_only) {
  std::vector<size_t> order(cands.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return edp_only ? cands[a].cost.edp < cands[b].cost.edp : cands[a].cost < cands[b].cost;
  });
  return order;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> SunstoneHardware::CoreGrid(std::int64_t cores) {
  if (cores <= 1) return {1, 1};
  i64 a = 1;
  if ((cores & (cores - 1)) == 0) {
    int log2 = 0;
    while ((i64{1} << (log2 + 1)) <= cores) ++log2;
    a = i64{1} << (log2 / 2);
  } else {
    for (i64 f = 1; f * f <= cores; ++f) {
      if (cores % f == 0) a = f;
    }
  }
  const i64 b = cores / a;
  return {std::max(a, b), std::min(a, b)};
}

namespace {

// Stages 1 and 2 of the search (the header comment): the core-level candidates, which depend on
// everything but the GLB. `costed` counts the mappings costed.
std::vector<Candidate> CoreLevel(const Dims& bound, const SunstoneHardware& hw,
                                 const SunstoneCosts& costs, i64* costed) {
  // 1. Register tiles under each PE-array unrolling.
  std::vector<Candidate> pe_level;
  for (const Unroll& u : Unrollings(bound, hw.pe_x, hw.pe_y)) {
    for (const Dims& reg : RegisterTiles(Div(bound, u.sp), hw.register_words,
                                         kRegisterGraph[u.operand])) {
      Candidate c;
      c.tile.Push(reg, false);
      c.tile.Push(u.sp, true);
      c.tile.Push(Div(bound, Mul(reg, u.sp)), false);
      c.cost = Evaluate(c.tile, bound, costs, 2, costs.words_per_cycle.data());
      pe_level.push_back(c);
    }
  }
  *costed += static_cast<i64>(pe_level.size());

  // 2. Core unrollings and buffer tiles, register tiles in increasing cost.
  std::vector<Candidate> core_level;
  const double cores = static_cast<double>(hw.core_x * hw.core_y);
  bool have_best = false;
  double best = 0;
  for (size_t i : SortedBy(pe_level, false)) {
    const Candidate& base = pe_level[i];
    if (have_best && base.cost.edp / cores > best) break;
    const Dims rest = base.tile.d[2];
    const Dims inner = base.tile.InnerProduct(1);
    for (const Unroll& u : Unrollings(rest, hw.core_x, hw.core_y)) {
      const Dims split = Div(rest, u.sp);
      auto fits = [&](const Dims& node) {
        for (i64 s : Sizes(Mul(node, inner))) {
          if (s > hw.buffer_words) return false;
        }
        return true;
      };
      for (const Dims& buf : MaximalTiles(split, fits)) {
        Candidate c;
        c.tile.Push(base.tile.d[0], false);
        c.tile.Push(base.tile.d[1], true);
        c.tile.Push(buf, false);
        c.tile.Push(u.sp, true);
        c.tile.Push(Div(split, buf), false);
        c.cost = Evaluate(c.tile, bound, costs, 3, nullptr);
        if (!have_best || c.cost.edp < best) have_best = true, best = c.cost.edp;
        core_level.push_back(c);
      }
    }
  }
  *costed += static_cast<i64>(core_level.size());
  return core_level;
}

// A lower bound on the cycles of every mapping stage 3 can make of a core-level candidate, whatever
// the GLB (SunstoneMapper::FloorCycles). Stage 3 splits the candidate's outermost loops `rest`
// into a GLB tile g and DRAM loops rest / g; Evaluate's cycles are the largest of its terms:
//  * compute and the registers' traffic: fixed by the candidate (the register level's accesses
//    depend only on the loops above it as a product and on the buffer tile), so Evaluate of the
//    candidate at the register level alone gives them exactly, the loop order it picks included;
//  * the buffers' traffic from the GLB: each operand's refills are its tile times the iterations
//    above, divided by a reuse factor that is g's extent in the operand's reuse dimension or 1
//    (Accesses); g divides rest, so rest's extents give the fewest refills any g can, and the
//    order that reuses inputs needs no more than the others;
//  * the GLB's traffic from DRAM: every input and weight word read, every output word written,
//    at least once.
double CandidateFloor(const Tile& t, const Dims& bound, const SunstoneCosts& costs) {
  const double* bandwidth = costs.words_per_cycle.data();
  double floor = Evaluate(t, bound, costs, 2, bandwidth).cycles;
  const Dims& rest = t.d[4];
  const auto sizes = Sizes(t.InnerProduct(2));
  const i64 iterations = Prod(t.d[3]) * Prod(rest);
  auto refills = [&](int operand, i64 factor) {
    const double reads = std::trunc(static_cast<double>(sizes[operand] * iterations) /
                                    static_cast<double>(factor));
    return std::trunc(reads / static_cast<double>(t.d[3][kReuseDim[operand]]));  // multicast
  };
  const double full_out = static_cast<double>(bound[kN] * bound[kK]);
  const double updates = refills(2, rest[kC]);
  const double reads = refills(0, rest[kK]) + refills(1, rest[kN]) + (updates - full_out);
  floor = std::max(floor, std::max(reads, updates) / bandwidth[1]);
  const auto whole = Sizes(bound);
  const double dram = std::max(static_cast<double>(whole[0] + whole[1]), full_out);
  return std::max(floor, dram / bandwidth[2]);
}

}  // namespace

SunstoneMapping SunstoneMapper::Search(const SunstoneGemm& gemm, const SunstoneHardware& hw,
                                       const SunstoneCosts& costs) {
  const Dims bound = {gemm.n, gemm.c, gemm.k};
  SunstoneMapping result;
  const std::vector<Candidate> core_level = CoreLevel(bound, hw, costs, &result.mappings_costed);

  // 3. GLB tiles, candidates in increasing EDP dealt to 8 workers by stride, each pruning by an
  //    energy lower bound against its own best.
  const auto order = SortedBy(core_level, true);
  const auto whole = Sizes(bound);
  const double e_opt =
      static_cast<double>(whole[0] + whole[1] + whole[2]) * (costs.access_pj[2] + costs.access_pj[3]);
  const double macs = static_cast<double>(Prod(bound));
  constexpr size_t kWorkers = 8;
  // The GLB tiles depend only on what is inside them (the rest is the bound divided by it); the
  // same inner tile recurs (on one core every unrolling principle gives the unit unrolling).
  std::map<Dims, std::vector<Dims>> glb_tiles;
  bool found = false;
  Candidate winner;
  for (size_t w = 0; w < kWorkers; ++w) {
    bool have = false;
    double worker_best = 0;
    std::vector<Candidate> ties;
    for (size_t j = w; j < order.size(); j += kWorkers) {
      const Candidate& base = core_level[order[j]];
      const double bound_e = e_opt * (macs / static_cast<double>(base.tile.SpatialCount()));
      if (have && base.cost.edp + bound_e > worker_best) break;
      const Dims rest = base.tile.d[4];
      const Dims inner = base.tile.InnerProduct(3);
      auto [tiles, fresh] = glb_tiles.try_emplace(inner);
      if (fresh) {
        auto fits = [&](const Dims& node) { return SizeSum(Mul(node, inner)) <= hw.glb_words; };
        tiles->second = MaximalTiles(rest, fits);
      }
      for (const Dims& glb : tiles->second) {
        Candidate c;
        c.tile = base.tile;
        c.tile.levels = 4;
        c.tile.Push(glb, false);
        c.tile.Push(Div(rest, glb), false);
        c.cost = Evaluate(c.tile, bound, costs, 4, costs.words_per_cycle.data());
        ++result.mappings_costed;
        if (!have || c.cost.edp < worker_best) {
          have = true;
          worker_best = c.cost.edp;
          ties.assign(1, c);
        } else if (c.cost.edp == worker_best) {
          ties.push_back(c);
        }
      }
    }
    for (const Candidate& c : ties) {
      if (!found || c.cost.edp < winner.cost.edp) found = true, winner = c;
    }
  }
  if (!found) {
    result.cycles = std::numeric_limits<double>::infinity();
    return result;
  }
  result.found = true;
  result.cycles = winner.cost.cycles;
  result.energy_pj = winner.cost.energy;
  result.bound_cycles = winner.cost.terms;
  for (int l = 0; l < 6; ++l) result.levels[l] = winner.tile.d[l];
  return result;
}

double SunstoneMapper::Floor(const SunstoneGemm& gemm, const SunstoneHardware& hw,
                             const SunstoneCosts& costs) {
  const Dims bound = {gemm.n, gemm.c, gemm.k};
  i64 costed = 0;
  double floor = std::numeric_limits<double>::infinity();
  for (const Candidate& c : CoreLevel(bound, hw, costs, &costed)) {
    floor = std::min(floor, CandidateFloor(c.tile, bound, costs));
  }
  return floor;
}

double SunstoneMapper::FloorCycles(const SunstoneGemm& gemm, const SunstoneHardware& hw) const {
  const Key key{gemm.n,    gemm.c,    gemm.k,           hw.pe_x,          hw.pe_y,
                hw.core_x, hw.core_y, hw.register_words, hw.buffer_words, -1};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  }
  const double cycles = Floor(gemm, hw, costs_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (memo_.size() >= kMemoEntries) memo_.clear();
  memo_.emplace(key, cycles);
  return cycles;
}

double SunstoneMapper::Cycles(const SunstoneGemm& gemm, const SunstoneHardware& hw) const {
  const Key key{gemm.n,    gemm.c,    gemm.k,         hw.pe_x,       hw.pe_y,
                hw.core_x, hw.core_y, hw.register_words, hw.buffer_words, hw.glb_words};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  }
  const double cycles = Search(gemm, hw, costs_).cycles;
  std::lock_guard<std::mutex> lock(mutex_);
  if (memo_.size() >= kMemoEntries) memo_.clear();  // bounded; a search costs about a millisecond
  memo_.emplace(key, cycles);
  return cycles;
}

}  // namespace phaze::estimators
