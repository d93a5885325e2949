// The energy model (phaze/estimate/energy_model.hpp) against hand-computed cases on a small chip
// whose tiling has one choice: a GEMM's MACs, its buffer reads and GLB tile traffic at the √S SRAM
// law, its HBM bytes; a vector op's lane operations and bytes; a GEMM larger than the GLB paying
// the blocked re-reads; folded work; static and peak power; the device estimator returning the
// same energy; and the technology keys checked where an architecture file enters.
#include <gtest/gtest.h>

#include <cmath>

#include "phaze/arch/area_model.hpp"
#include "phaze/estimate/energy_model.hpp"
#include "phaze/plugin/registry.hpp"
#include "plugin_registry.hpp"

namespace phaze {
namespace {

// One tensor core of 4 × 4, one vector core of 4 lanes, a 1 MiB GLB; a per-core buffer of 300
// bytes admits only the 2 × 2-block tile (8 × 8): 2·(2·4 + 2·4)·4·2 = 256 ≤ 300 < 384.
ArchConfig Small() {
  ArchConfig a;
  a.name = "small";
  a.num_tc = 1;
  a.num_vc = 1;
  a.pe_x = a.pe_y = a.pe_vc = 4;
  a.glb_bytes = 1 << 20;
  a.l2_tc_bytes = 300;
  a.l2_vc_bytes = 1024;
  a.word_bytes = 2;
  return a;
}

constexpr double kPj = 1e-12;

TEST(EnergyModel, GemmByHand) {
  const ArchConfig a = Small();
  const EnergyTechnology t;  // 2.0 pJ/MAC, 6.25 pJ/B at 1 MiB, 3.9 pJ/bit
  // 8 × 8 × 8: 512 MACs.
  const Energy e = EnergyModel::Op(OpWork::Gemm({1, 8, 8, 8}, 2), a);
  EXPECT_NEAR(e.compute_j, 512 * 2.0 * kPj, 1e-20);
  // Buffer reads 512·2·(1/4 + 1/4) = 512 B at 6.25·√(300/2^20) pJ/B; one 8 × 8 tile moves
  // (8 + 8)·8·2 = 256 operand bytes and writes 64·2 = 128 through the 1 MiB GLB at 6.25 pJ/B.
  const double buffer = 512 * 6.25 * std::sqrt(300.0 / 1048576) * kPj;
  EXPECT_NEAR(e.on_chip_j, buffer + 384 * 6.25 * kPj, 1e-18);
  // HBM: A, B and C once (3 · 64 · 2 = 384 bytes) at 3.9 pJ/bit.
  EXPECT_NEAR(e.memory_j, 384 * 8 * 3.9 * kPj, 1e-18);
  EXPECT_EQ(e.network_j, 0.0);
  EXPECT_EQ(e.static_j, 0.0);
  EXPECT_EQ(t.mac_pj, 2.0);
  // 16 × 16 × 8: four tiles, each (8 + 8)·8·2 bytes, and the 256-word result.
  const Energy big = EnergyModel::Op(OpWork::Gemm({1, 16, 16, 8}, 2), a);
  EXPECT_NEAR(big.on_chip_j,
              2048 * 6.25 * std::sqrt(300.0 / 1048576) * kPj + (4 * 256 + 512) * 6.25 * kPj,
              1e-17);
}

TEST(EnergyModel, GemmLargerThanTheGlbPaysTheReReads) {
  ArchConfig a = Small();
  a.glb_bytes = 2048;  // 1024 words: a 64³ GEMM (3 · 4096 words) does not fit
  const Energy e = EnergyModel::Op(OpWork::Gemm({1, 64, 64, 64}, 2), a);
  // Hong–Kung: (2·64³/√1024 + 64²)·2 bytes = (16384 + 4096)·2 = 40960 bytes.
  EXPECT_NEAR(e.memory_j, 40960 * 8 * 3.9 * kPj, 1e-16);
}

TEST(EnergyModel, VectorOpsFoldedWorkAndEpilogues) {
  const ArchConfig a = Small();
  // GELU over 1000 elements: 16 cycles per element per lane (vector_cycles.hpp) = 16000 lane
  // operations at 1.0 pJ; 2000 bytes read and 2000 written, through the GLB and to HBM once.
  const Energy gelu = EnergyModel::Op(OpWork::Vector("gelu", 1000, 2), a);
  EXPECT_NEAR(gelu.compute_j, 16000 * 1.0 * kPj, 1e-20);
  EXPECT_NEAR(gelu.on_chip_j, 4000 * 6.25 * kPj, 1e-18);
  EXPECT_NEAR(gelu.memory_j, 4000 * 8 * 3.9 * kPj, 1e-18);
  // A cycle count the table lacks comes from the estimator's params (7 cycles), else one cycle.
  const Energy custom = EnergyModel::Op(OpWork::Vector("frob", 1000, 2), a, {{"frob", 7}});
  EXPECT_NEAR(custom.compute_j, 7000 * kPj, 1e-20);
  EXPECT_NEAR(EnergyModel::Op(OpWork::Vector("frob", 1000, 2), a).compute_j, 1000 * kPj, 1e-20);
  // A GEMM with a bias epilogue pays one more pass over its output (2 · 128 bytes, GLB and HBM)
  // and the bias's lane operations; a folded scale only its arithmetic.
  OpWork g = OpWork::Gemm({1, 8, 8, 8}, 2);
  const Energy plain = EnergyModel::Op(g, a);
  g.vector = {{"bias_add", 64, 8}};
  const Energy biased = EnergyModel::Op(g, a);
  EXPECT_NEAR(biased.memory_j - plain.memory_j, 256 * 8 * 3.9 * kPj, 1e-18);
  EXPECT_NEAR(biased.on_chip_j - plain.on_chip_j, 256 * 6.25 * kPj, 1e-18);
  g.vector = {{"scale", 64, 8}};
  const Energy scaled = EnergyModel::Op(g, a);
  EXPECT_EQ(scaled.memory_j, plain.memory_j);
  EXPECT_NEAR(scaled.compute_j - plain.compute_j, 64 * 1.0 * kPj, 1e-20);
}

TEST(EnergyModel, StaticAndPeakPowerAndTheDeviceEstimator) {
  ArchConfig a = LoadArchConfig("a100-sxm-80gb");
  // 20 W idle + 0.05 W/mm² × 826 mm².
  EXPECT_NEAR(EnergyModel::StaticPowerW(a), 20 + 0.05 * 826, 1e-9);
  // Every MAC, lane, buffer and HBM byte busy: above the static power, and for the A100's 7 nm
  // figures below twice its 400 W TDP.
  const double peak = EnergyModel::PeakPowerW(a);
  EXPECT_GT(peak, EnergyModel::StaticPowerW(a) + 432 * 256 * 1.41e9 * 0.7651e-12);
  EXPECT_LT(peak, 800);
  // A template chip's die is the area model's.
  ArchConfig chip = Small();
  EXPECT_NEAR(EnergyModel::StaticPowerW(chip), 20 + 0.05 * DieAreaMm2(chip), 1e-12);
  EXPECT_NEAR(DieAreaMm2(chip), AreaModel::Default().Area(chip).TotalMm2(), 1e-12);
  // The device estimator returns the energy model's figure.
  const auto device = testing::BuiltPlugins().CreateEstimator(
      "device", ConfigNode::EmptyMap("test", "estimator.params"));
  const OpWork w = OpWork::Gemm({1, 1024, 1024, 1024}, 2);
  const OpEstimate e = device->Estimate(w, a, Pass::kForward);
  ASSERT_TRUE(e.energy.has_value());
  EXPECT_EQ(e.energy->TotalJ(), EnergyModel::Op(w, a).TotalJ());
}

TEST(EnergyModel, TechnologyKeysAreCheckedWhereTheArchitectureEnters) {
  EXPECT_EQ(EnergyTechnology::Check("mac_pj", 0.5), "");
  EXPECT_NE(EnergyTechnology::Check("mac_pj", -1).find("expected"), std::string::npos);
  EXPECT_NE(EnergyTechnology::Check("mac_pJ", 1).find("known: mac_pj"), std::string::npos);
  try {
    ParseArchConfig(ConfigNode::ParseString(
        "num_tc: 1\nnum_vc: 1\npe_x: 4\npe_y: 4\nglb_mib: 1\nenergy: {mac_pj: 1, sram_pj: 2}\n",
        "chip.yaml"));
    FAIL() << "a misspelt energy key was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("chip.yaml:6:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace phaze
