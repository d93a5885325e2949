// The analytic and table estimators' own checks (the conformance suite every estimator passes is
// tests/conformance) against independent figures: the TPUv4 peak,
// hand-computed cycle counts, the ring formula, and the reference's Sunstone cycles
// (../shared/data/sunstone-calibration.csv, copied to tests/data/).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "phaze/estimate/estimate_cache.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/plugin/registry.hpp"
#include "model_ops.hpp"
#include "plugin_registry.hpp"
#include "test_util.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

Registry& Estimators() { return testing::BuiltPlugins(); }

std::shared_ptr<Estimator> Make(const std::string& name) {
  return Estimators().CreateEstimator(name, ConfigNode::EmptyMap("test", "estimator.params"));
}

// ------------------------------------------------------------------ the analytic estimator

TEST(Analytic, Tpuv4PeakAndLargeGemmEfficiency) {
  const ArchConfig tpu = LoadArchConfig("tpuv4");
  EXPECT_DOUBLE_EQ(tpu.PeakTensorFlopsPerS(), 2.0 * 8 * 128 * 128 * 1.05e9);  // 275.25 TFLOP/s
  EXPECT_DOUBLE_EQ(tpu.PeakTensorFlopsPerS(), 275.2512e12);
  const auto analytic = Make("analytic");
  for (GemmShape s : {GemmShape{1, 8192, 8192, 8192}, GemmShape{1, 4096, 4096, 4096},
                      GemmShape{8, 2048, 4096, 4096}}) {
    const OpEstimate e = analytic->Estimate(OpWork::Gemm(s, 2), tpu, Pass::kForward);
    const double utilisation =
        static_cast<double>(s.Flops()) / e.all_cores_s / tpu.PeakTensorFlopsPerS();
    EXPECT_GE(utilisation, 0.85) << s.batch << "x" << s.m << "x" << s.n << "x" << s.k;
    EXPECT_LE(utilisation, 1.0);
  }
}

TEST(Analytic, SmallGemmsAreLatencyOrBandwidthBound) {
  const ArchConfig tpu = LoadArchConfig("tpuv4");
  const auto analytic = Make("analytic");
  // 16×128←128: one weight tile; the array's fill and drain (pe_x + pe_y = 256 cycles) dominate
  // 16 rows of streaming: latency-bound.
  OpEstimate e = analytic->Estimate(OpWork::Gemm({1, 16, 128, 128}, 2), tpu, Pass::kForward);
  EXPECT_DOUBLE_EQ(e.all_cores_s * tpu.frequency_hz, 128 + 256);
  // A GEMV over a 16384² weight (512 MiB, more than the GLB): HBM-bound, the weights at 1.2 TB/s.
  const GemmShape gemv{1, 1, 16384, 16384};
  e = analytic->Estimate(OpWork::Gemm(gemv, 2), tpu, Pass::kForward);
  const double weights_s = 16384.0 * 16384 * 2 / 1.2e12;
  EXPECT_GE(e.all_cores_s, weights_s);
  EXPECT_LE(e.all_cores_s, weights_s * 1.1);
}

TEST(Analytic, VectorOpsAndErrors) {
  const ArchConfig tpu = LoadArchConfig("tpuv4");
  const auto analytic = Make("analytic");
  // GELU at 16 cycles per element per lane: 1 Mi elements / 128 lanes · 16 = 131,072 cycles on one
  // vector core, half on both (memory: 4 MiB at ≤ 384 words/cycle is far less).
  OpEstimate e = analytic->Estimate(OpWork::Vector("gelu", 1 << 20, 2), tpu, Pass::kForward);
  EXPECT_DOUBLE_EQ(e.single_core_s * tpu.frequency_hz, 131072);
  EXPECT_DOUBLE_EQ(e.all_cores_s * tpu.frequency_hz, 65536);
  // GELU is not ReLU.
  EXPECT_GT(e.single_core_s,
            10 * analytic->Estimate(OpWork::Vector("relu", 1 << 20, 2), tpu, Pass::kForward)
                     .single_core_s);
  // Unknown functions and collectives are explained errors, not zeros.
  OpWork odd = OpWork::Vector("frobnicate", 100, 2);
  odd.name = "layer.odd";
  try {
    analytic->Estimate(odd, tpu, Pass::kForward);
    FAIL() << "no error";
  } catch (const UnsupportedOpError& err) {
    EXPECT_NE(std::string(err.what())
                  .find("op 'layer.odd': no cycle cost for vector function 'frobnicate'"),
              std::string::npos)
        << err.what();
  }
  OpWork collective;
  collective.kind = OpKind::kCollective;
  collective.name = "ar";
  EXPECT_THROW(analytic->Estimate(collective, tpu, Pass::kForward), UnsupportedOpError);
  // A parameter adds a function.
  auto custom = Estimators().CreateEstimator(
      "analytic", ConfigNode::ParseString("vector_cycles: {frobnicate: 3}", "p.yaml"));
  e = custom->Estimate(odd, tpu, Pass::kForward);
  EXPECT_DOUBLE_EQ(e.single_core_s * tpu.frequency_hz, 3);
}

TEST(Analytic, SunstonePresetReproducesTheReferenceCycles) {
  // 144 points measured by running the reference's Sunstone (REFERENCE §2.2). The preset's
  // all-cores latency is the measured multi-core cycles, or the single core's when those are
  // fewer (an op may leave cores idle; the measured 64×128×128 point is 13× slower than one core).
  std::ifstream in(std::string(PHAZE_SOURCE_DIR) + "/tests/data/sunstone-calibration.csv");
  ASSERT_TRUE(in);
  const auto sunstone = Make("sunstone");
  std::string line;
  std::getline(in, line);  // header
  std::map<std::string, double> one_core;  // "PE_x,PE_y,GLB,gemm" → cycles measured on 1 core
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) c.push_back(cell);
    ASSERT_EQ(c.size(), 12u) << line;
    if (c[0] == "1") one_core[c[1] + "," + c[2] + "," + c[3] + "," + c[4]] = std::stod(c[9]);
    rows.push_back(c);
  }
  ASSERT_EQ(rows.size(), 144u);
  int slower_on_all_cores = 0;
  for (const auto& c : rows) {
    ArchConfig a;
    a.num_tc = std::stoll(c[0]);
    a.pe_x = std::stoll(c[1]);
    a.pe_y = std::stoll(c[2]);
    a.glb_bytes = std::stoll(c[3]) << 20;
    a.l2_tc_bytes = ArchConfig::DefaultL2Bytes(a.pe_x * a.pe_y);
    // CSV: output N × K_out, reduction C_red, batch B → GEMM {B, N, K_out, C_red}.
    const GemmShape s{std::stoll(c[5]), std::stoll(c[6]), std::stoll(c[7]), std::stoll(c[8])};
    const OpEstimate e = sunstone->Estimate(OpWork::Gemm(s, 2), a, Pass::kForward);
    const double single = one_core.at(c[1] + "," + c[2] + "," + c[3] + "," + c[4]);
    const double measured = std::stod(c[9]);
    slower_on_all_cores += measured > single;
    EXPECT_NEAR(e.single_core_s * a.frequency_hz, single, 1e-6 * single) << c[4];
    EXPECT_NEAR(e.all_cores_s * a.frequency_hz, std::min(single, measured), 1e-6 * measured)
        << a.num_tc << " cores " << a.pe_x << "x" << a.pe_y << " " << c[4];
  }
  EXPECT_GT(slower_on_all_cores, 0);  // the data does exercise the min
}

TEST(Analytic, CacheReturnsTheSameAndCountsHits) {
  const ArchConfig tpu = LoadArchConfig("tpuv4");
  auto inner = Make("analytic");
  CachedEstimator cached(inner);
  // BERT-large's ops (the conformance suite runs every estimator on four models).
  const auto ops = testing::ModelOps({std::string(PHAZE_SOURCE_DIR) + "/workloads/bert-large.yaml"});
  for (int round = 0; round < 2; ++round) {
    for (const auto& op : ops) {
      const OpEstimate a = cached.Estimate(op, tpu, Pass::kForward);
      const OpEstimate b = inner->Estimate(op, tpu, Pass::kForward);
      EXPECT_EQ(a.single_core_s, b.single_core_s);
      EXPECT_EQ(a.all_cores_s, b.all_cores_s);
    }
  }
  EXPECT_GE(cached.Hits(), static_cast<std::int64_t>(ops.size()));    // the whole second round
  EXPECT_LT(cached.Misses(), static_cast<std::int64_t>(ops.size()));  // repeated shapes hit too
}

TEST(TableEstimator, LooksUpRowsAndNamesMissingOnes) {
  testing::TempDir dir;
  const ArchConfig tpu = LoadArchConfig("tpuv4");
  const OpWork gemm = OpWork::Gemm({1, 512, 1024, 1024}, 2);
  testing::WriteFile(dir / "lat.csv", "# measured\nop,arch,single_core_s,all_cores_s\n" +
                                          gemm.Signature() + ",tpuv4,2.5e-05,4e-06\n");
  testing::WriteFile(dir / "run.yaml", "file: lat.csv\n");
  auto table =
      Estimators().CreateEstimator("table", ConfigNode::ParseFile((dir / "run.yaml").string()));
  const OpEstimate e = table->Estimate(gemm, tpu, Pass::kForward);
  EXPECT_DOUBLE_EQ(e.single_core_s, 2.5e-5);
  EXPECT_DOUBLE_EQ(e.all_cores_s, 4e-6);
  OpWork other = OpWork::Vector("gelu", 64, 2);
  other.name = "mlp.gelu";
  try {
    table->Estimate(other, tpu, Pass::kForward);
    FAIL() << "no error";
  } catch (const UnsupportedOpError& err) {
    EXPECT_NE(std::string(err.what())
                  .find("no row for op 'mlp.gelu' on architecture 'tpuv4'; add the row: " +
                        other.Signature() + ",tpuv4,"),
              std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace phaze
