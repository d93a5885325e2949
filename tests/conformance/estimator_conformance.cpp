// The estimator conformance suite (Phaze::conformance): every estimator the plugins under test
// register, on real transformer ops and three chips —
//  * every estimate is finite and non-negative, all cores never slower than one, and an op that
//    does work costs something (the reference-reproducing `sunstone` is exempt: it treats
//    embeddings and bias-gradient sums as free, as the reference does);
//  * monotone: doubling any GEMM dimension never makes it faster;
//  * deterministic and thread-safe: two threads estimating the same ops agree exactly;
//  * the lower bound (Estimator::EstimateLowerBound) never above the estimate.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "phaze/conformance/conformance.hpp"

namespace phaze::conformance {
namespace {

class EstimatorTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    estimator_ = MakeEstimator(GetParam());
  }
  std::shared_ptr<Estimator> estimator_;
};

TEST_P(EstimatorTest, FiniteNonNegativeAndAllCoresNeverWorse) {
  const auto ops = TransformerOps();
  ASSERT_GT(ops.size(), 200u);
  for (const auto& arch : Archs()) {
    for (const auto& op : ops) {
      const OpEstimate e = estimator_->Estimate(op, arch, Pass::kForward);
      ASSERT_TRUE(std::isfinite(e.single_core_s) && e.single_core_s >= 0)
          << op.name << " " << arch.name;
      ASSERT_TRUE(std::isfinite(e.all_cores_s) && e.all_cores_s >= 0)
          << op.name << " " << arch.name;
      EXPECT_LE(e.all_cores_s, e.single_core_s * (1 + 1e-9)) << op.name << " on " << arch.name;
      // Only views are free (the sunstone preset, like the reference, also treats embeddings and
      // bias-gradient sums as free).
      if (GetParam() != "sunstone" && op.Core() != CoreClass::kNone) {
        EXPECT_GT(e.all_cores_s, 0) << op.name << " does work but costs nothing";
      }
    }
  }
}

TEST_P(EstimatorTest, MonotoneInGemmSize) {
  for (const auto& arch : Archs()) {
    for (GemmShape s : MonotoneShapes()) {
      const OpEstimate base = estimator_->Estimate(OpWork::Gemm(s, 2), arch, Pass::kForward);
      for (int dim = 0; dim < 4; ++dim) {
        GemmShape bigger = s;
        (dim == 0 ? bigger.batch : dim == 1 ? bigger.m : dim == 2 ? bigger.n : bigger.k) *= 2;
        const OpEstimate e = estimator_->Estimate(OpWork::Gemm(bigger, 2), arch, Pass::kForward);
        EXPECT_GE(e.single_core_s, base.single_core_s * (1 - 1e-12)) << arch.name << " dim " << dim;
        EXPECT_GE(e.all_cores_s, base.all_cores_s * (1 - 1e-12)) << arch.name << " dim " << dim;
      }
    }
  }
}

TEST_P(EstimatorTest, DeterministicAndThreadSafe) {
  const auto ops = TransformerOps();
  const ArchConfig arch = LoadArchConfig("tpuv4");
  std::vector<OpEstimate> first(ops.size()), second(ops.size());
  std::thread other([&] {
    for (size_t i = 0; i < ops.size(); ++i)
      second[i] = estimator_->Estimate(ops[i], arch, Pass::kForward);
  });
  for (size_t i = 0; i < ops.size(); ++i)
    first[i] = estimator_->Estimate(ops[i], arch, Pass::kForward);
  other.join();
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(first[i].single_core_s, second[i].single_core_s);
    EXPECT_EQ(first[i].all_cores_s, second[i].all_cores_s);
  }
}

TEST_P(EstimatorTest, LowerBoundNeverAboveTheEstimate) {
  const auto ops = TransformerOps();
  for (const auto& arch : Archs()) {
    for (const auto& op : ops) {
      const OpEstimate e = estimator_->Estimate(op, arch, Pass::kForward);
      const OpEstimate lb = estimator_->EstimateLowerBound(op, arch, Pass::kForward);
      EXPECT_GE(lb.single_core_s, 0) << op.name << " on " << arch.name;
      EXPECT_GE(lb.all_cores_s, 0) << op.name << " on " << arch.name;
      EXPECT_LE(lb.single_core_s, e.single_core_s) << op.name << " on " << arch.name;
      EXPECT_LE(lb.all_cores_s, e.all_cores_s) << op.name << " on " << arch.name;
      EXPECT_LE(lb.kernels, e.kernels) << op.name << " on " << arch.name;
    }
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(EstimatorTest);
INSTANTIATE_TEST_SUITE_P(Estimators, EstimatorTest,
                         ::testing::ValuesIn(Plugins().Names(ComponentKind::kEstimator)),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace phaze::conformance

namespace phaze::conformance {
// Referenced by main() (conformance.cpp) so that linking the static Phaze::conformance keeps this
// suite's object, whose tests nothing else references.
int kEstimatorSuite = 0;
}  // namespace phaze::conformance
