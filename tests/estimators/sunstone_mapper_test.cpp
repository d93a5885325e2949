// The sunstone estimator's mapping search (plugins/estimators/analytic/sunstone_mapper.hpp)
// against what the reference's Sunstone measured (../shared/data/sunstone-calibration.csv, 144
// points, and the figures quoted in REFERENCE §2.2 that are not in it) and against hand-worked
// cases of its latency formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "plugins/estimators/analytic/sunstone_mapper.hpp"
#include "test_paths.hpp"

namespace phaze::estimators {
namespace {

// The reference's per-core buffer: 16 bytes per PE, at least 1 KiB, its byte count used as words.
SunstoneHardware Reference(std::int64_t cores, std::int64_t pe_x, std::int64_t pe_y,
                           std::int64_t glb_mib) {
  SunstoneHardware hw;
  hw.pe_x = pe_x;
  hw.pe_y = pe_y;
  std::tie(hw.core_x, hw.core_y) = SunstoneHardware::CoreGrid(cores);
  hw.buffer_words = std::max<std::int64_t>(1024, 16 * pe_x * pe_y);
  hw.glb_words = glb_mib << 20;
  return hw;
}

TEST(SunstoneMapper, ReproducesEveryCalibrationPointWithoutFittedConstants) {
  std::ifstream in(std::string(PHAZE_SOURCE_DIR) + "/tests/data/sunstone-calibration.csv");
  ASSERT_TRUE(in);
  std::string line;
  std::getline(in, line);  // num_cores,PE_x,PE_y,GLB_MB,gemm,B,N,K_out,C_red,sunstone_cycles,...
  std::vector<double> errors;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) c.push_back(cell);
    ASSERT_EQ(c.size(), 12u) << line;
    const auto hw = Reference(std::stoll(c[0]), std::stoll(c[1]), std::stoll(c[2]), std::stoll(c[3]));
    // Sunstone's N is batch × rows, C the reduction, K the output columns.
    const SunstoneGemm g{std::stoll(c[5]) * std::stoll(c[6]), std::stoll(c[8]), std::stoll(c[7])};
    const SunstoneMapping m = SunstoneMapper::Search(g, hw, {});
    ASSERT_TRUE(m.found) << line;
    const double reference = std::stod(c[9]);
    errors.push_back(std::abs(m.cycles - reference) / reference);
    EXPECT_EQ(m.cycles, reference) << line;
  }
  ASSERT_EQ(errors.size(), 144u);
  std::sort(errors.begin(), errors.end());
  std::cout << "sunstone search over the 144 calibration points: median |rel err| "
            << (errors[71] + errors[72]) / 2 << ", p90 " << errors[129] << ", max "
            << errors.back() << "\n";
}

TEST(SunstoneMapper, ReproducesTheRegisterAndGlbFiguresQuotedInTheReference) {
  // REFERENCE §2.2: 512×1024←1024 on 1×(128×128) with 8/16/32/64-byte registers takes
  // 73,728 / 57,344 / 40,960 / 65,536 cycles (not in the calibration file).
  const std::pair<std::int64_t, double> registers[] = {
      {8, 73728}, {16, 57344}, {32, 40960}, {64, 65536}};
  for (const auto& [bytes, cycles] : registers) {
    auto hw = Reference(1, 128, 128, 32);
    hw.register_words = bytes;
    EXPECT_EQ(SunstoneMapper::Search({512, 1024, 1024}, hw, {}).cycles, cycles) << bytes;
  }
  // GLB 2 MiB → 128 MiB changes nothing for 4096×11008←4096 on 1×128×128: 24,657,920 cycles.
  for (std::int64_t mib : {2, 128}) {
    EXPECT_EQ(SunstoneMapper::Search({4096, 4096, 11008}, Reference(1, 128, 128, mib), {}).cycles,
              24657920)
        << mib;
  }
}

TEST(SunstoneMapper, ComputeBoundCase) {
  // 64×64×64 on one 4×4 array: 262,144 MACs over 16 PEs = 16,384 cycles, every traffic term
  // below it.
  SunstoneHardware hw;
  hw.pe_x = hw.pe_y = 4;
  const SunstoneMapping m = SunstoneMapper::Search({64, 64, 64}, hw, {});
  EXPECT_EQ(m.cycles, 16384);
  EXPECT_EQ(m.bound_cycles[0], 16384);
  for (int l = 1; l < 4; ++l) EXPECT_LE(m.bound_cycles[l], 16384) << l;
}

TEST(SunstoneMapper, RegisterLevelBoundCase) {
  // 512×1024←1024 on one 256×256 array (REFERENCE: 3× ideal). The search keeps an N×C×K = 2×4×4
  // register tile per PE (inputs 2·4 + weights 4·4 + outputs 2·4 = 32 words), unrolls C and K
  // 256-wide over the array and loops N 256 times at the core buffer. Register fills from the
  // buffer, the loops outside the register tile running 256·256·256 times:
  //   inputs  8 words · 256³ / (K multicast 256)            =   524,288
  //   weights 16 · 256³ / (N reuse of the buffer loop 256)   = 1,048,576
  //   outputs 8 · 256³ / (C multicast 256) − first fills    =         0 re-reads
  // (1,572,864 words) / 64 words per cycle = 24,576 cycles; compute is 2^29 / 65,536 = 8,192.
  SunstoneHardware hw;
  hw.pe_x = hw.pe_y = 256;
  hw.buffer_words = 16 * 256 * 256;
  hw.glb_words = 32 << 20;
  const SunstoneMapping m = SunstoneMapper::Search({512, 1024, 1024}, hw, {});
  EXPECT_EQ(m.levels[0], (std::array<std::int64_t, 3>{2, 4, 4}));
  EXPECT_EQ(m.levels[1], (std::array<std::int64_t, 3>{1, 256, 256}));
  EXPECT_EQ(m.levels[2], (std::array<std::int64_t, 3>{256, 1, 1}));
  EXPECT_EQ(m.bound_cycles[0], 8192);
  EXPECT_EQ(m.bound_cycles[1], 1572864.0 / 64);
  EXPECT_EQ(m.cycles, 24576);
  // Buffer ← GLB and GLB ← DRAM move each operand once: (2^19 + 2^20 + 0) / 256 and / 128.
  EXPECT_EQ(m.bound_cycles[2], 1572864.0 / 256);
  EXPECT_EQ(m.bound_cycles[3], 1572864.0 / 128);
}

TEST(SunstoneMapper, DramLevelBoundCase) {
  // With the reference's bandwidths the register level always binds before DRAM (its traffic is
  // at least the DRAM traffic, at half the bandwidth), so slow the DRAM link to 1 word/cycle: the
  // best mapping then reads inputs and weights once (4,096 + 4,096 words) and writes the 4,096
  // outputs once: max(8,192 reads, 4,096 writes) / 1 = 8,192 cycles, above the 2^18 MACs / 256
  // PEs = 1,024 of a 16×16 array.
  SunstoneHardware hw;
  hw.pe_x = hw.pe_y = 16;
  hw.buffer_words = 16 * 16 * 16;
  SunstoneCosts slow_dram;
  slow_dram.words_per_cycle = {1e9, 1e9, 1};
  const SunstoneMapping m = SunstoneMapper::Search({64, 64, 64}, hw, slow_dram);
  EXPECT_EQ(m.bound_cycles[3], 8192);
  EXPECT_EQ(m.cycles, 8192);
  EXPECT_EQ(m.levels[5], (std::array<std::int64_t, 3>{1, 1, 1}));  // nothing re-fetched
}

TEST(SunstoneMapper, MoreCoresCanBeSlowerAsInTheReference) {
  // EDP, not latency, picks the mapping: on 64 cores of 128×128, 512×1024←1024 takes 548,864
  // cycles against 40,960 on one core (REFERENCE §2.2). The estimator reports min of the two.
  EXPECT_EQ(SunstoneMapper::Search({512, 1024, 1024}, Reference(64, 128, 128, 32), {}).cycles,
            548864);
  EXPECT_EQ(SunstoneMapper::Search({512, 1024, 1024}, Reference(1, 128, 128, 32), {}).cycles,
            40960);
}

TEST(SunstoneMapper, NoMappingWhenTheUnitTilesDoNotFit) {
  // A 4-word core buffer cannot hold the 16×16 array's weight tile: no mapping, as the reference
  // (which then costs the op infinite).
  SunstoneHardware hw;
  hw.pe_x = hw.pe_y = 16;
  hw.buffer_words = 4;
  const SunstoneMapping m = SunstoneMapper::Search({512, 1024, 1024}, hw, {});
  EXPECT_FALSE(m.found);
  EXPECT_TRUE(std::isinf(m.cycles));
  EXPECT_TRUE(std::isinf(SunstoneMapper().Cycles({512, 1024, 1024}, hw)));
}

TEST(SunstoneMapper, CoreGridIsTheReferences) {
  using P = std::pair<std::int64_t, std::int64_t>;
  EXPECT_EQ(SunstoneHardware::CoreGrid(1), P(1, 1));
  EXPECT_EQ(SunstoneHardware::CoreGrid(2), P(2, 1));
  EXPECT_EQ(SunstoneHardware::CoreGrid(8), P(4, 2));
  EXPECT_EQ(SunstoneHardware::CoreGrid(64), P(8, 8));
  EXPECT_EQ(SunstoneHardware::CoreGrid(2048), P(64, 32));
  EXPECT_EQ(SunstoneHardware::CoreGrid(12), P(4, 3));  // not a power of two
}

TEST(SunstoneMapper, MemoReturnsTheSearchFromEveryThread) {
  const SunstoneMapper mapper;
  const std::vector<SunstoneGemm> gemms = {{512, 1024, 1024}, {8192, 64, 512}, {2048, 1600, 6400}};
  std::vector<double> a(gemms.size()), b(gemms.size());
  const auto hw = Reference(16, 32, 32, 32);
  std::thread other([&] {
    for (size_t i = 0; i < gemms.size(); ++i) b[i] = mapper.Cycles(gemms[i], hw);
  });
  for (size_t i = 0; i < gemms.size(); ++i) a[i] = mapper.Cycles(gemms[i], hw);
  other.join();
  for (size_t i = 0; i < gemms.size(); ++i) {
    const double direct = SunstoneMapper::Search(gemms[i], hw, {}).cycles;
    EXPECT_EQ(a[i], direct);
    EXPECT_EQ(b[i], direct);
    EXPECT_EQ(mapper.Cycles(gemms[i], hw), direct);
  }
}

// The reference's bottom_up, written as it walks: breadth first from the unit tile over the
// divisor lattice, children in dimension order, each node queued once, a node none of whose
// children fits listed; then the unit tile and the listed nodes, less those that do not fit.
std::vector<std::array<std::int64_t, 3>> BreadthFirstWalk(
    const std::array<std::int64_t, 3>& bound,
    const std::function<bool(const std::array<std::int64_t, 3>&)>& fits) {
  using Tile = std::array<std::int64_t, 3>;
  std::array<std::vector<std::int64_t>, 3> divisors;
  for (int d = 0; d < 3; ++d) {
    for (std::int64_t v = 1; v <= bound[d]; ++v) {
      if (bound[d] % v == 0) divisors[d].push_back(v);
    }
  }
  auto value = [&](const std::array<int, 3>& i) {
    return Tile{divisors[0][i[0]], divisors[1][i[1]], divisors[2][i[2]]};
  };
  std::vector<Tile> out{{1, 1, 1}};
  std::set<std::array<int, 3>> queued;
  std::deque<std::array<int, 3>> queue{{0, 0, 0}};
  while (!queue.empty()) {
    const auto node = queue.front();
    queue.pop_front();
    bool overflow = true;
    for (int d = 0; d < 3; ++d) {
      auto child = node;
      if (++child[d] >= static_cast<int>(divisors[d].size()) || !fits(value(child))) continue;
      overflow = false;
      if (queued.insert(child).second) queue.push_back(child);
    }
    if (overflow) out.push_back(value(node));
  }
  std::vector<Tile> kept;
  for (const Tile& t : out) {
    if (fits(t)) kept.push_back(t);
  }
  return kept;
}

TEST(SunstoneMapper, MaximalTilesAreTheBreadthFirstWalks) {
  using Tile = std::array<std::int64_t, 3>;
  const std::vector<std::int64_t> sizes = {1, 2, 7, 12, 36, 64, 96, 360, 720, 1024};
  std::mt19937_64 random(7);
  auto pick = [&] { return sizes[random() % sizes.size()]; };
  int cases = 0, listed = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const Tile bound = {pick(), pick(), pick()};
    const Tile inner = {pick(), pick(), pick()};
    const std::int64_t capacity = static_cast<std::int64_t>(random() % 200000);
    // The two tests the search makes: the three operands together (the GLB), each operand
    // alone (the core buffer).
    const std::function<bool(const Tile&)> together = [&](const Tile& t) {
      const std::int64_t n = t[0] * inner[0], c = t[1] * inner[1], k = t[2] * inner[2];
      return n * c + c * k + n * k <= capacity;
    };
    const std::function<bool(const Tile&)> each = [&](const Tile& t) {
      const std::int64_t n = t[0] * inner[0], c = t[1] * inner[1], k = t[2] * inner[2];
      return n * c <= capacity && c * k <= capacity && n * k <= capacity;
    };
    for (const auto* fits : {&together, &each}) {
      const auto expected = BreadthFirstWalk(bound, *fits);
      EXPECT_EQ(SunstoneMaximalTiles(bound, *fits), expected)
          << bound[0] << "x" << bound[1] << "x" << bound[2] << " inner " << inner[0] << "x"
          << inner[1] << "x" << inner[2] << " capacity " << capacity;
      ++cases;
      listed += static_cast<int>(expected.size());
    }
  }
  EXPECT_EQ(cases, 1200);
  EXPECT_GT(listed, 2 * cases);  // not only empty lists and unit tiles
}

// Floor bounds the search's cycles from below for every GLB (checked on the calibration file's
// GEMMs and arrays, each at GLB sizes from 64 KiB to 128 MiB and at the size measured), is +∞
// exactly when no GLB gives a mapping, and is tight enough to bound a family: at least half the
// best GLB's cycles on most of them (a bound at the compute term alone would not be).
TEST(SunstoneMapper, FloorBoundsTheSearchAtEveryGlbSize) {
  std::ifstream in(std::string(PHAZE_SOURCE_DIR) + "/tests/data/sunstone-calibration.csv");
  ASSERT_TRUE(in);
  std::string line;
  std::getline(in, line);
  std::set<std::array<std::int64_t, 7>> seen;
  int cases = 0, searches = 0, tight = 0, above_compute = 0, tight_above_compute = 0;
  double worst = 1;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) c.push_back(cell);
    ASSERT_EQ(c.size(), 12u) << line;
    const std::int64_t cores = std::stoll(c[0]), pe_x = std::stoll(c[1]), pe_y = std::stoll(c[2]);
    const SunstoneGemm g{std::stoll(c[5]) * std::stoll(c[6]), std::stoll(c[8]), std::stoll(c[7])};
    if (!seen.insert({cores, pe_x, pe_y, g.n, g.c, g.k, 0}).second) continue;
    const double floor = SunstoneMapper::Floor(g, Reference(cores, pe_x, pe_y, 1), {});
    double best = std::numeric_limits<double>::infinity();
    const std::int64_t measured_kib = std::stoll(c[3]) << 10;
    for (std::int64_t kib : std::vector<std::int64_t>{64, 1024, 8192, 32768, 131072, measured_kib}) {
      auto hw = Reference(cores, pe_x, pe_y, 1);
      hw.glb_words = kib << 10;
      const SunstoneMapping m = SunstoneMapper::Search(g, hw, {});
      ++searches;
      if (!m.found) continue;
      EXPECT_LE(floor, m.cycles) << line << " GLB " << kib << " KiB";
      best = std::min(best, m.cycles);
    }
    ASSERT_FALSE(std::isinf(floor)) << line;  // the measured GLB has a mapping
    ++cases;
    worst = std::min(worst, floor / best);
    const bool is_tight = floor >= 0.5 * best;
    tight += is_tight;
    // The compute term (MACs over every PE) alone, which the floor must beat to be of use.
    const double compute = static_cast<double>(g.n * g.c * g.k) /
                           static_cast<double>(cores * pe_x * pe_y);
    if (best > 1.05 * compute) ++above_compute, tight_above_compute += is_tight;
  }
  std::cout << "sunstone floor on " << cases << " GEMM × array cases (" << searches
            << " searches): " << tight << " within 2x of the best GLB's cycles, worst ratio "
            << worst << "; " << tight_above_compute << " of the " << above_compute
            << " more than 5% above their compute term\n";
  EXPECT_GT(cases, 20);
  EXPECT_GE(tight, cases * 3 / 4);
  EXPECT_GT(above_compute, 20);
  EXPECT_GE(tight_above_compute, above_compute * 3 / 4);
  // No core-level candidate, no mapping at any GLB: a buffer below one register tile's operands.
  auto starved = Reference(1, 16, 16, 128);
  starved.buffer_words = 0;
  EXPECT_TRUE(std::isinf(SunstoneMapper::Floor({512, 1024, 1024}, starved, {})));
  EXPECT_FALSE(SunstoneMapper::Search({512, 1024, 1024}, starved, {}).found);
}

}  // namespace
}  // namespace phaze::estimators
