// The example plugin's own checks, run by the conformance main (Phaze::conformance) beside the
// suites every estimator passes: on the TPUv4-like chip (4 tensor cores of 128×128 at 940 MHz,
// 1.2 TB/s of HBM) a 4096³ GEMM is compute-bound and takes its FLOPs at peak (2·4096³ / (4 · 2 ·
// 128² · 0.94e9 · 0.8) = 1.1151 ms); a 1-row GEMM reading a 4096² weight is memory-bound
// (its bytes over 1.2 TB/s).
#include <gtest/gtest.h>

#include "phaze/conformance/conformance.hpp"

namespace {

TEST(Roofline, ComputeAndMemoryBoundGemmsByHand) {
  const auto roofline = phaze::conformance::Plugins().CreateEstimator(
      "roofline", phaze::ConfigNode::ParseString("efficiency: 0.8", "params.yaml"));
  const phaze::ArchConfig tpu = phaze::LoadArchConfig("tpuv4");
  const double peak = 2.0 * tpu.pe_x * tpu.pe_y * tpu.frequency_hz * tpu.num_tc;
  const auto big = phaze::OpWork::Gemm({1, 4096, 4096, 4096}, 2);
  EXPECT_NEAR(roofline->Estimate(big, tpu, phaze::Pass::kForward).all_cores_s,
              2.0 * 4096 * 4096 * 4096 / (peak * 0.8), 1e-12);
  const auto thin = phaze::OpWork::Gemm({1, 1, 4096, 4096}, 2);
  const double bytes = static_cast<double>(thin.bytes_read + thin.bytes_written + thin.weight_bytes);
  EXPECT_NEAR(roofline->Estimate(thin, tpu, phaze::Pass::kForward).all_cores_s,
              bytes / tpu.hbm_bandwidth_bytes_per_s, 1e-15);
}

}  // namespace
