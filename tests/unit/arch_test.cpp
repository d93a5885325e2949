// Architecture presets, the 22 nm area model against the reference's published areas, and the
// paper's space (29,360 configs, TPUv4-like first).
#include <gtest/gtest.h>

#include "phaze/arch/arch_space.hpp"
#include "phaze/core/error.hpp"
#include "test_util.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

ArchConfig Config(std::int64_t tc, std::int64_t vc, std::int64_t x, std::int64_t y,
                  std::int64_t glb_mib) {
  ArchConfig a;
  a.num_tc = tc;
  a.num_vc = vc;
  a.pe_x = x;
  a.pe_y = y;
  a.pe_vc = x;
  a.glb_bytes = glb_mib << 20;
  a.l2_tc_bytes = ArchConfig::DefaultL2Bytes(x * y);
  a.l2_vc_bytes = ArchConfig::DefaultL2Bytes(x);
  return a;
}

TEST(Area, MatchesTheReferenceAreas) {
  const AreaModel model = AreaModel::Default();
  // Areas from the reference's cores.json (Accelergy + CACTI, 22 nm), µm².
  EXPECT_NEAR(model.AreaUm2(LoadArchConfig("tpuv4")), 278826676.31216, 1.0);
  EXPECT_NEAR(model.AreaUm2(Config(8, 2, 128, 128, 128)), 278826676.31216, 1.0);
  EXPECT_NEAR(model.AreaUm2(Config(4096, 4096, 16, 2, 32)), 246416424.736, 1.0);
  EXPECT_NEAR(model.AreaUm2(Config(4, 4, 128, 128, 128)), 227441355.805632, 1.0);
  EXPECT_NEAR(model.AreaUm2(Config(1, 1, 128, 128, 128)), 188427588.951408, 1.0);
  EXPECT_NEAR(model.AreaUm2(Config(1, 1, 2, 2, 2)), 3355047.77, 0.01);
  EXPECT_FALSE(model.Area(LoadArchConfig("tpuv4")).extrapolated);
  EXPECT_TRUE(model.Area(LoadArchConfig("spotlight-opt")).extrapolated);  // 26 MB L2
}

TEST(ArchSpace, PaperSpaceHas29360ConfigsByDecreasingArea) {
  const AreaModel model = AreaModel::Default();
  const ArchSpace space =
      ArchSpace::LoadFile(std::string(PHAZE_SOURCE_DIR) + "/share/arch/paper-space.yaml", model);
  EXPECT_EQ(space.CandidateCount(), 13 * 13 * 8 * 8 * 7);
  const auto points = space.Enumerate(model);
  ASSERT_EQ(points.size(), 29360u);
  const ArchConfig& first = points[0].arch;
  EXPECT_EQ(std::vector<std::int64_t>({first.num_tc, first.num_vc, first.pe_x, first.pe_y,
                                       first.pe_vc, first.glb_bytes >> 20}),
            std::vector<std::int64_t>({8, 2, 128, 128, 128, 128}));
  const ArchConfig& second = points[1].arch;  // shares the top 0.01 mm² bucket (REFERENCE §1.4)
  EXPECT_EQ(std::vector<std::int64_t>({second.num_tc, second.num_vc, second.pe_x, second.pe_y}),
            std::vector<std::int64_t>({8, 1, 256, 64}));
  for (size_t i = 1; i < points.size(); ++i) ASSERT_GE(points[i - 1].area_um2, points[i].area_um2);
  EXPECT_NEAR(points.back().area_um2, 3355047.77, 0.01);  // the smallest: 1 TC, 1 VC, 2×2, 2 MiB
  // Single-core configs get the scaled GLB bandwidth: 4096·128/256 for 1 × 128×128.
  EXPECT_DOUBLE_EQ(space.Make(1, 1, 128, 128, 128, 128 << 20).glb_bandwidth_words_per_cycle, 2048);
}

// A value listed twice made every config it is in twice, under one name.
TEST(ArchSpace, AValueListedTwiceIsRefusedWhereItIs) {
  const AreaModel area = AreaModel::Default();
  EXPECT_EQ(phaze::testing::ErrorOf([&] {
              ArchSpace::Parse(ConfigNode::ParseString("name: x\nnum_tc: [2, 4, 2]\nnum_vc: [1]\n"
                                                       "pe_x: [8]\npe_y: [8]\nglb_mib: [1]\n",
                                                       "s.yaml"),
                               area);
            }),
            "s.yaml:2:16: num_tc[2]: listed twice: give each value once");
}

TEST(ArchConfig, PresetsAndLocatedErrors) {
  const ArchConfig common = LoadArchConfig("phaze-common");
  EXPECT_EQ(common.num_tc, 2);
  EXPECT_EQ(common.num_vc, 512);
  EXPECT_EQ(common.glb_bytes, 32 << 20);
  EXPECT_EQ(common.hbm_bytes, 64LL << 30);
  EXPECT_EQ(common.l2_tc_bytes, 1 << 20);
  try {
    LoadArchConfig("tpuv3");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "no architecture file or preset named 'tpuv3'; did you mean 'tpuv4'?"),
              std::string::npos)
        << e.what();
  }
  try {
    ParseArchConfig(
        ConfigNode::ParseString("num_tc: 8\nnum_vc: 0\npe_x: 4\npe_y: 4\nglb_mib: 2\n", "a.yaml"));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("a.yaml:2:9: num_vc:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace phaze

namespace phaze {
namespace {

TEST(GpuPresets, PublishedPeaksAndCalibration) {
  // A100 SXM4: dense BF16 312 TFLOP/s (datasheet) = 2 · 108 SMs · 4 TCs · 256 FMA · 1.41 GHz.
  const ArchConfig a100 = LoadArchConfig("a100-sxm-80gb");
  EXPECT_DOUBLE_EQ(a100.PeakTensorFlopsPerS(), 2.0 * 108 * 4 * 256 * 1.41e9);
  EXPECT_NEAR(a100.PeakTensorFlopsPerS() / 312e12, 1.0, 0.001);
  EXPECT_EQ(a100.hbm_bytes, 84987740160);  // 79.15 GiB, as PyTorch reports the device
  EXPECT_DOUBLE_EQ(a100.hbm_bandwidth_bytes_per_s, 2.039e12);
  EXPECT_EQ(a100.calibration.count("gemm_efficiency"), 1u);
  // H100 SXM5: dense BF16 989.4 TFLOP/s = 2 · 132 SMs · 4 TCs · 512 FMA · 1.83 GHz.
  const ArchConfig h100 = LoadArchConfig("h100-sxm-80gb");
  EXPECT_NEAR(h100.PeakTensorFlopsPerS() / 989.4e12, 1.0, 0.001);
  EXPECT_DOUBLE_EQ(h100.hbm_bandwidth_bytes_per_s, 3.35e12);
  // The calibration is echoed.
  EXPECT_NE(a100.ToJson().Find("calibration"), nullptr);
  // TPU v4 as published: 2 TensorCores × 4 MXUs of 128 × 128 at 1.05 GHz = 275 TFLOP/s (Cloud
  // TPU docs), 32 GiB HBM2 at 1.2 TB/s.
  const ArchConfig tpu = LoadArchConfig("tpuv4-chip");
  EXPECT_NEAR(tpu.PeakTensorFlopsPerS() / 275e12, 1.0, 0.001);
  EXPECT_EQ(tpu.hbm_bytes, 32LL << 30);
  EXPECT_EQ(tpu.estimator, "device");
}

TEST(ArchConfig, DeviceCalibrationIsCheckedWhereItEnters) {
  const std::string base = "num_tc: 8\nnum_vc: 2\npe_x: 4\npe_y: 4\nglb_mib: 2\n";
  auto error = [&](const std::string& text) {
    try {
      ParseArchConfig(ConfigNode::ParseString(base + text, "a.yaml"));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // For the device model (the default estimator): its keys only, in their ranges, located.
  EXPECT_NE(error("calibration: {gemm_efficiency: 1.7}\n").find("a.yaml:6:32: calibration.gemm_efficiency: expected a fraction in (0, 1]"),
            std::string::npos)
      << error("calibration: {gemm_efficiency: 1.7}\n");
  EXPECT_NE(error("calibration: {gemm_eficiency: 0.8}\n")
                .find("no technology parameter 'gemm_eficiency' in the device model; known: "
                      "gemm_efficiency, memory_efficiency, kernel_overhead_s, concurrent_kernels, "
                      "wave_quantization"),
            std::string::npos)
      << error("calibration: {gemm_eficiency: 0.8}\n");
  EXPECT_NE(error("calibration: {kernel_overhead_s: -1}\n").find("at least 0"), std::string::npos);
  EXPECT_NE(error("calibration: {concurrent_kernels: 2}\n").find("expected 0 or 1"),
            std::string::npos);
  EXPECT_NE(error("estimator: gpu\ncalibration: {memory_efficiency: 0}\n").find("(0, 1]"),
            std::string::npos);
  EXPECT_EQ(error("calibration: {gemm_efficiency: 1, concurrent_kernels: 0}\n"), "no error");
  // A power limit needs the board power the calibration was measured at.
  EXPECT_NE(error("power_limit_w: 500\n").find("a.yaml:6:16: power_limit_w: needs tdp_w beside it"),
            std::string::npos)
      << error("power_limit_w: 500\n");
  EXPECT_NE(error("tdp_w: -700\n").find("a.yaml:6:8: tdp_w"), std::string::npos)
      << error("tdp_w: -700\n");
  EXPECT_EQ(error("tdp_w: 700\npower_limit_w: 500\n"), "no error");
  EXPECT_NE(error("tdp_w: 700\npower_limit_w: 800\n").find("power_limit_w: above tdp_w (700 W)"),
            std::string::npos)
      << error("tdp_w: 700\npower_limit_w: 800\n");
  // Another estimator's calibration is its own, but numbers (finite ones).
  EXPECT_EQ(error("estimator: mine\ncalibration: {anything: 7}\n"), "no error");
  EXPECT_NE(error("estimator: mine\ncalibration: {anything: 1e999}\n").find("calibration.anything: expected a number, found '1e999'"),
            std::string::npos)
      << error("estimator: mine\ncalibration: {anything: 1e999}\n");
}

TEST(GpuPresets, ASpaceOfOneFixedDevice) {
  const AreaModel area = AreaModel::Default();
  const ArchSpace s = ArchSpace::Parse(
      ConfigNode::ParseString("name: a100\ndevice: a100-sxm-80gb\n", "space.yaml"), area);
  const auto points = s.Enumerate(area);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].arch.name, "a100-sxm-80gb");
  EXPECT_EQ(points[0].arch.calibration, LoadArchConfig("a100-sxm-80gb").calibration);
  EXPECT_EQ(s.CandidateCount(), 1);
  try {
    ArchSpace::Parse(ConfigNode::ParseString("name: x\ndevice: a100\nnum_tc: [1]\n", "s.yaml"), area);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown key 'num_tc'"), std::string::npos) << e.what();
  }
}

// A template space may give its candidates an FP8 rate; a preset states its own (the H100 and
// H200: 1.88, the FP8 over BF16 rate measured on an H200, share/validation/kernels/; the
// datasheet's is 2).
TEST(GpuPresets, Fp8RatesOfPresetsAndSpaces) {
  EXPECT_DOUBLE_EQ(LoadArchConfig("h100-sxm-80gb").fp8_tensor_ratio, 1.88);
  EXPECT_DOUBLE_EQ(LoadArchConfig("h200-sxm-141gb").fp8_tensor_ratio, 1.88);
  EXPECT_EQ(LoadArchConfig("a100-sxm-80gb").fp8_tensor_ratio, 0);
  const AreaModel area = AreaModel::Default();
  const std::string space =
      "name: s\nnum_tc: [8]\nnum_vc: [2]\npe_x: [128]\npe_y: [128]\nglb_mib: [128]\n"
      "area_budget: {preset: tpuv4}\nmin_area_fraction: 0\n";
  const auto plain = ArchSpace::Parse(ConfigNode::ParseString(space, "s.yaml"), area).Enumerate(area);
  const auto fp8 = ArchSpace::Parse(ConfigNode::ParseString(space + "fp8_tensor_ratio: 2\n", "s.yaml"),
                                    area)
                       .Enumerate(area);
  ASSERT_EQ(plain.size(), 1u);
  ASSERT_EQ(fp8.size(), 1u);
  EXPECT_EQ(plain[0].arch.fp8_tensor_ratio, 0);
  EXPECT_EQ(fp8[0].arch.fp8_tensor_ratio, 2);
  EXPECT_EQ(fp8[0].area_um2, plain[0].area_um2);  // FP8 datapaths are not charged
  EXPECT_THROW(ArchSpace::Parse(ConfigNode::ParseString(space + "fp8_tensor_ratio: 99\n", "s.yaml"),
                                area),
               ConfigError);
}

}  // namespace
}  // namespace phaze
