// Tensor-parallel communication chunked beside the GEMMs (training.tensor_parallel_overlap,
// graph/tensor_parallel_overlap.hpp): which collectives the transform marks, and what the layer
// schedule makes of them, against makespans worked out by hand on a chain whose every op has a
// fixed time.
#include "phaze/graph/tensor_parallel_overlap.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <map>

#include "phaze/graph/graph_builder.hpp"
#include "phaze/schedule/layer_schedule.hpp"
#include "phaze/schedule/scheduler.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "phaze/strategy/slicing.hpp"
#include "plugin_registry.hpp"
#include "test_paths.hpp"

namespace phaze {
namespace {

constexpr double kUs = 1e-6;

// Every op takes its name's time on all cores (ten times that on one).
class FixedTimes : public Estimator {
 public:
  explicit FixedTimes(std::map<std::string, double> times) : times_(std::move(times)) {}
  OpEstimate Estimate(const OpWork& op, const ArchConfig&, Pass) const override {
    const double t = times_.at(op.name);
    return OpEstimate{10 * t, t, std::nullopt};
  }

 private:
  std::map<std::string, double> times_;
};

Operator Vector(const std::string& name, OpKind kind, int in, int out) {
  Operator op;
  op.name = name;
  op.kind = kind;
  op.vector = {{"add", 64, 1}};
  op.inputs = {in};
  op.outputs = {out};
  return op;
}

Operator Gemm(const std::string& name, int in, int out) {
  Operator op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.gemm = GemmShape{1, 8, 8, 8};
  op.inputs = {in};
  op.outputs = {out};
  return op;
}

// A sequence-parallel MLP's forward as the slicer lays it out: norm → all-gather → (identity
// re-gather) → FC1 → activation → FC2 → reduce-scatter → residual, over t = 4 devices; a
// bytes-per-op collective moves `bytes` each.
UniqueLayer Mlp(std::int64_t bytes) {
  UniqueLayer u;
  u.name = "block";
  u.kind = LayerKind::kBlock;
  OperatorGraph& g = u.forward;
  std::vector<int> t;
  for (const char* name : {"x", "ln", "gathered", "regathered", "h", "act", "y", "scattered", "out"}) {
    t.push_back(g.AddTensor(name, 64, 2));
  }
  g.AddOp(Vector("ln", OpKind::kNorm, t[0], t[1]));
  g.AddOp(MakeCollective("ln.all_gather", CollectiveKind::kAllGather,
                         CollectiveKind::kReduceScatter, bytes, 4, 1, t[1], t[2]));
  g.AddOp(MakeCollective("ln.regather", std::nullopt, CollectiveKind::kAllGather, bytes, 4, 1,
                         t[2], t[3]));
  g.AddOp(Gemm("fc1", t[3], t[4]));
  g.AddOp(Vector("act", OpKind::kElementwise, t[4], t[5]));
  g.AddOp(Gemm("fc2", t[5], t[6]));
  g.AddOp(MakeCollective("fc2.reduce_scatter", CollectiveKind::kReduceScatter,
                         CollectiveKind::kAllGather, bytes, 4, 1, t[6], t[7]));
  g.AddOp(Vector("residual", OpKind::kElementwise, t[7], t[8]));
  g.MarkOutput(t[8]);
  return u;
}

double Makespan(const OperatorGraph& g, const Network& network, double collective_overlap,
                const FixedTimes& estimator) {
  auto& plugins = testing::BuiltPlugins();
  ArchConfig arch = LoadArchConfig("a100-sxm-80gb");
  arch.collective_overlap = collective_overlap;
  const ScheduleProblem p =
      BuildScheduleProblem(g, Pass::kForward, estimator, arch, network, "mlp");
  SchedulerOptions o;
  o.solve.relative_gap = 1e-9;
  o.cache = false;
  return Scheduler(plugins.CreateSolverBackend("cbc"), o).Solve(p).makespan_s;
}

// The marks: the all-gather feeding FC1 (through the identity re-gather) and the reduce-scatter
// FC2 feeds, at the share asked for; nothing at share 0; nothing outside the blocks.
TEST(TensorParallelOverlap, MarksTheCollectivesNextToWeightGemms) {
  LayerGraph g;
  g.unique_layers = {Mlp(1 << 20)};
  const LayerGraph marked = WithTensorParallelOverlap(g, 0.5);
  for (const Operator& op : marked.unique_layers[0].forward.Ops()) {
    const bool chunked = op.name == "ln.all_gather" || op.name == "fc2.reduce_scatter";
    EXPECT_EQ(op.gemm_overlap, chunked ? 0.5 : -1) << op.name;
  }
  EXPECT_EQ(WithTensorParallelOverlap(g, 0).unique_layers[0].forward.Ops(),
            g.unique_layers[0].forward.Ops());
  g.unique_layers[0].kind = LayerKind::kHead;
  const LayerGraph head = WithTensorParallelOverlap(g, 0.5);  // held: the loop reads into it
  for (const Operator& op : head.unique_layers[0].forward.Ops()) {
    EXPECT_EQ(op.gemm_overlap, -1) << op.name;
  }
}

// By hand, with ln = act = residual = 1 µs, FC1 = FC2 = 10 µs and each collective T µs:
// * unmarked: a chain, ln + T + FC1 + act + FC2 + T + residual, whatever collective_overlap is
//   (nothing else could run beside a collective's link part);
// * marked at share ρ: the all-gather's exposed part (1 − ρ)·T, then FC1 beside its link part
//   ρ·T, act after both; the reduce-scatter's link part starts with FC2, its exposed part follows
//   both, the residual after it:
//   1 + (1 − ρ)T + max(10, ρT) + 1 + max(10, ρT) + (1 − ρ)T + 1 — never less than the chain's
//   compute plus T for each collective where ρT outlasts the GEMM (T = 32 µs).
TEST(TensorParallelOverlap, ChunkedCollectivesRunBesideTheirGemms) {
  if (!testing::BuiltPlugins().Has(ComponentKind::kSolverBackend, "cbc")) {
    GTEST_SKIP() << "no cbc backend built";
  }
  const FixedTimes estimator(
      {{"ln", kUs}, {"fc1", 10 * kUs}, {"act", kUs}, {"fc2", 10 * kUs}, {"residual", kUs}});
  const std::int64_t bytes = 1 << 20;
  for (double link_s : {8 * kUs, 16 * kUs, 32 * kUs}) {
    // A flat link whose all-gather and reduce-scatter of `bytes` over 4 take link_s: (3/4)·bytes
    // at bandwidth B, no latency.
    const Network network = Network::Flat(0.75 * static_cast<double>(bytes) / link_s, 0);
    const double T = network.CollectiveS(CollectiveKind::kAllGather, bytes, CommGroup{4, 1});
    ASSERT_NEAR(T, link_s, 1e-15);
    ASSERT_NEAR(network.CollectiveS(CollectiveKind::kReduceScatter, bytes, CommGroup{4, 1}), T,
                1e-15);
    LayerGraph g;
    g.unique_layers = {Mlp(bytes)};
    const double chain = 1 * kUs + T + 10 * kUs + 1 * kUs + 10 * kUs + T + 1 * kUs;
    for (double phi : {0.0, 0.25, 1.0}) {
      EXPECT_NEAR(Makespan(g.unique_layers[0].forward, network, phi, estimator), chain, 1e-12)
          << "T " << T << ", collective_overlap " << phi;
    }
    for (double rho : {0.25, 0.5, 1.0}) {
      const OperatorGraph marked = WithTensorParallelOverlap(g, rho).unique_layers[0].forward;
      const double by_hand = 1 * kUs + (1 - rho) * T + std::max(10 * kUs, rho * T) + 1 * kUs +
                             std::max(10 * kUs, rho * T) + (1 - rho) * T + 1 * kUs;
      // The architecture's own overlap applies to the marked collectives only where it is larger
      // (φ = 1: the whole collective beside the GEMM, as ρ = 1 is).
      for (double phi : {0.0, 0.25}) {
        EXPECT_NEAR(Makespan(marked, network, phi, estimator), by_hand, 1e-12)
            << "T " << T << ", share " << rho << ", collective_overlap " << phi;
      }
      EXPECT_NEAR(Makespan(marked, network, 1.0, estimator),
                  1 * kUs + std::max(10 * kUs, T) + 1 * kUs + std::max(10 * kUs, T) + 1 * kUs,
                  1e-12);
    }
  }
}

// On a GPT block sliced by sequence parallelism (t = 4), forward and backward, with the
// architecture's collective_overlap equal to the share: the marked problem relaxes the unmarked
// one (each link part waits for less, its successors for the same), so its optimum is never
// longer; nor shorter than the compute alone (every collective free) plus the exposed parts,
// which hold the whole device. Solved within a relative gap g, hence the factors (1 + g).
TEST(TensorParallelOverlap, SequenceParallelBlockGetsNoSlowerAndHidesWhatItCan) {
  auto& plugins = testing::BuiltPlugins();
  if (!plugins.Has(ComponentKind::kSolverBackend, "cbc")) GTEST_SKIP() << "no cbc backend built";
  const ConfigNode none = ConfigNode::EmptyMap("test", "params");
  const auto estimator = plugins.CreateEstimator("analytic", none);
  const auto strategy = plugins.CreateStrategy("sequence_parallel", none);
  const LayerGraph g = BuildSlicedLayerGraph(
      *strategy, "sequence_parallel",
      LoadModelSpec(std::string(PHAZE_SOURCE_DIR) + "/workloads/tiny-gpt.yaml"), GraphOptions{},
      4);
  ArchConfig arch = LoadArchConfig("a100-sxm-80gb");
  constexpr double kGap = 1e-3;
  SchedulerOptions o;
  o.solve.relative_gap = kGap;
  o.cache = false;
  const Scheduler scheduler(plugins.CreateSolverBackend("cbc"), o);
  const Network network = Network::Flat(2e9, 2e-6);
  for (double share : {0.3, 0.7}) {
    arch.collective_overlap = share;
    const LayerGraph marked = WithTensorParallelOverlap(g, share);
    const UniqueLayer& plain = g.unique_layers[1];
    const UniqueLayer& chunked = marked.unique_layers[1];
    ASSERT_EQ(plain.kind, LayerKind::kBlock);
    int marks = 0;
    for (const auto* graph : {&chunked.forward, &chunked.backward}) {
      for (const Operator& op : graph->Ops()) marks += op.gemm_overlap == share ? 1 : 0;
    }
    // Forward: the all-gathers before QKV and FC1, the reduce-scatters after the projection and
    // FC2; backward: their conjugates and the two re-gathers of the inputs.
    EXPECT_EQ(marks, 4 + 6);
    for (Pass pass : {Pass::kForward, Pass::kBackward}) {
      const auto solve = [&](const UniqueLayer& u, const Network& n) {
        return scheduler
            .Solve(BuildScheduleProblem(PassGraph(u, pass), pass, *estimator, arch, n, "b"))
            .makespan_s;
      };
      const double overlapped = solve(chunked, network);
      EXPECT_LE(overlapped, solve(plain, network) * (1 + kGap));
      double exposed = 0;
      for (const ScheduleOp& op : BuildScheduleProblem(PassGraph(chunked, pass), pass, *estimator,
                                                       arch, network, "b")
                                      .ops) {
        if (op.name.ends_with(".exposed")) exposed += op.all_cores_s;
      }
      EXPECT_GT(exposed, 0);
      const Network free = Network::Flat(std::numeric_limits<double>::infinity());
      EXPECT_GE(overlapped, solve(plain, free) / (1 + kGap) + exposed - 1e-12);
    }
  }
}

}  // namespace
}  // namespace phaze
