#include "phaze/placement/placement_search.hpp"

#include <fmt/printf.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "phaze/system/gradient_sync.hpp"
#include "phaze/system/optimizer_step.hpp"
#include "phaze/system/pipeline.hpp"
#include "phaze/system/stage_memory.hpp"
#include "phaze/system/step_time.hpp"

namespace phaze {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool Finite(double v) { return std::isfinite(v) && v >= 0; }

// "106552127488 bytes (99.23 GiB)"
std::string BytesText(double bytes) {
  std::string buf = fmt::sprintf("%.0f bytes (%.2f GiB)", bytes, bytes / 1073741824.0);
  return buf;
}

// What the memory check depends on besides the stage and its position (header comment).
// (And the load: sharding gradients or parameters adds collectives that depend on d.)
struct MemoryClass {
  ShardDivisors ways;       // devices sharing what the sharding divides (dense, experts)
  std::int64_t m = 1;       // micro-batches per pipeline, capped (ClassOf)
  int s = 1;                // stages (interleaved)
  std::int64_t comm_d = 0;  // d, when the sharding runs collectives every micro-batch; else 0
  bool operator==(const MemoryClass&) const = default;
};

// `table`: the width's (its weight_replicas and expert_fold set what the sharding divides over).
MemoryClass ClassOf(const PlacementProblem& p, int t, std::int64_t d, int s,
                    const LayerTable& table) {
  MemoryClass c;
  c.ways = ShardWaysOf(p, table, t, d);
  if (p.sharding >= Sharding::kGradients) c.comm_d = d;
  // m caps the micro-batches in flight (InFlightMicroBatches) when it is below the most a stage
  // of s could keep (1F1B: s; interleaved: the first stage's warm-up); otherwise it caps nothing,
  // and every (d, s) with as many micro-batches or more shares one class (kUncapped), so the DP
  // runs once for them as before the cap.
  constexpr std::int64_t kUncapped = std::numeric_limits<std::int64_t>::max();
  const std::int64_t m = p.MicroBatchesPerPipeline(d);
  switch (p.schedule) {
    case PipelineSchedule::kGPipe:
      c.m = m;
      break;
    case PipelineSchedule::k1F1B:
      c.m = m < s ? m : kUncapped;
      break;
    case PipelineSchedule::kInterleaved: {
      c.s = s;
      const std::int64_t v = p.virtual_stages;
      c.m = m < (2 * (s - 1) + (v - 1) * s + 1 + v - 1) / v ? m : kUncapped;
      break;
    }
  }
  return c;
}

// Everything about contiguous stages [i, j) of one width's layer order, precomputed once per
// pipeline level (the level changes the send times inside the loads).
class StageTable {
 public:
  // `split`: the memory class's divisors when its stages' gathered layers depend on them
  // (SplitsGather: folded experts under sharding gradients or parameters), else none.
  // `bounds`: when given (a fixed placement's stage boundaries, 0 and n included), only the
  // stages between two of them are filled — O(p·n) instead of O(n²), the rest of the cells left
  // at 0.
  StageTable(const LayerTable& table, const PlacementProblem& problem, int t, int level,
             std::optional<ShardDivisors> split = std::nullopt,
             const std::vector<int>* bounds = nullptr)
      : n_(static_cast<int>(table.layers.size())),
        t_(t),
        problem_(problem),
        table_(table),
        split_(split),
        bound_(static_cast<size_t>(n_) + 1, bounds ? 0 : 1) {
    if (bounds) {
      for (int b : *bounds) bound_.at(static_cast<size_t>(b)) = 1;
    }
    preds_.resize(n_);
    succs_.resize(n_);
    const double v = problem_.virtual_stages;
    for (const auto& e : table.edges) {
      const Link link{e.from, e.to, e.bytes, EdgeSendS(problem_, e, level) * v,
                      problem_.network.SendS(e.bytes, level) * v};
      preds_[e.to].push_back(link);
      succs_[e.from].push_back(link);
    }
    const size_t cells = static_cast<size_t>(n_ + 1) * (n_ + 1);
    for (auto* vec :
         {&load_plain_, &load_recompute_, &stash_, &optimizer_step_, &expert_optimizer_step_,
          &expert_weight_, &forward_, &backward_, &recompute_in_backward_, &recompute_stage_}) {
      vec->assign(cells, 0);
    }
    footprint_.assign(cells, StageFootprint{});
    has_tp_.assign(cells, 0);
    FillForward();
    FillBackward();
    if (problem_.sends == PipelineSends::kBlocking) AddSendsOut();
  }

  int n() const { return n_; }
  int t() const { return t_; }
  double TiedGradientBytes() const { return table_.tied_gradient_bytes; }
  std::int64_t WeightReplicas() const { return table_.weight_replicas; }
  const LayerTable& Table() const { return table_; }
  bool StageRecompute(int position) const { return problem_.recompute && position > 1; }
  // Per micro-batch: the compute (forward, backward, recompute and waits for sends)…
  double Load(int i, int j, int position) const {
    return StageRecompute(position) ? load_recompute_[At(i, j)] : load_plain_[At(i, j)];
  }
  // … and the sharding's collectives beside it, at c.comm_d (0 when it runs none): one set of
  // calls per layer holding weights (FSDP's unit, a transformer block: each pays its calls'
  // latency), summed from layer i up; with the part no compute hides (ShardingEdgeS: the stage's
  // first layer's).
  double LayerShardingS(int l, const MemoryClass& c) const {
    const PlacementLayer& layer = table_.layers[static_cast<size_t>(l)];
    return StageShardingPerMicroBatchS(problem_, table_, t_, c.comm_d, WeightsOf(layer));
  }
  double ShardingS(int i, int j, const MemoryClass& c) const {
    double sum = 0;
    for (int l = i; c.comm_d > 0 && l < j; ++l) sum += LayerShardingS(l, c);
    return sum;
  }
  double ShardingEdge(int i, const MemoryClass& c) const {
    const PlacementLayer& first = table_.layers[static_cast<size_t>(i)];
    return c.comm_d > 0 ? StageShardingEdgeS(problem_, table_, t_, c.comm_d, WeightsOf(first))
                        : 0.0;
  }
  double InFlight(int position, const MemoryClass& c) const {
    return InFlightMicroBatches(problem_, position, c.s, c.m);
  }
  double Memory(int i, int j, int position, const MemoryClass& c) const {
    return MemoryAt(i, j, InFlight(position, c), c);
  }
  bool Fits(int i, int j, int position, const MemoryClass& c) const {
    return Memory(i, j, position, c) <= problem_.hbm_bytes;
  }
  // The same with InFlight(position, c) computed once by the caller (the DP's inner loops).
  double MemoryAt(int i, int j, double in_flight, const MemoryClass& c) const {
    const size_t k = At(i, j);
    return StagePeakBytes(footprint_[k], stash_[k], in_flight, problem_.sharding, c.ways);
  }
  bool FitsAt(int i, int j, double in_flight, const MemoryClass& c) const {
    return MemoryAt(i, j, in_flight, c) <= problem_.hbm_bytes;
  }
  // Whether Memory(i, j, position, c) is nondecreasing in j, as computed: every term is then a
  // running sum or maximum of nonnegative layer bytes times a factor ≥ 0 (a sharded stage — more
  // than one shard way, which unsharded classes never have — subtracts the part it divides, so it
  // is left out), so once a stage does not fit, no longer one from the same layer does.
  bool FitsOnlyShorter(int position, const MemoryClass& c) const {
    return c.ways.ways <= 1 && c.ways.expert_ways <= 1 && InFlight(position, c) >= 1;
  }
  double WeightBytes(int i, int j) const { return footprint_[At(i, j)].weight; }
  double ExpertWeightBytes(int i, int j) const { return expert_weight_[At(i, j)]; }
  // The stage's weights for its reduction (StageWeights: with what their all-gathers move).
  StageWeights Weights(int i, int j) const {
    const StageFootprint& f = footprint_[At(i, j)];
    return {f.weight, ExpertWeightBytes(i, j), f.gathered, f.expert_gathered};
  }
  // What the first stage [0, j) of s offers its reduction to hide behind (FinishStep's window).
  SyncWindow SyncWindowOf(int j, int s) const {
    const size_t k = At(0, j);
    SyncWindow w;
    w.backward_s = backward_[k] + recompute_in_backward_[k];
    w.forward_s = forward_[k];
    if (footprint_[k].weight > 0) w.first_share = WeightBytes(0, 1) / footprint_[k].weight;
    w.stages = s;
    return w;
  }
  double OptimizerStepS(int i, int j) const { return optimizer_step_[At(i, j)]; }
  double ExpertOptimizerStepS(int i, int j) const { return expert_optimizer_step_[At(i, j)]; }
  // Devices of the stage: t if it holds a tensor-parallel layer, else 1.
  int Devices(int i, int j) const { return has_tp_[At(i, j)] ? t_ : 1; }
  // Counts toward m (stages with a = 1) only when t > 1.
  int SingleDevice(int i, int j) const { return t_ > 1 && !has_tp_[At(i, j)] ? 1 : 0; }

  StagePlan MakeStage(int i, int j, int position, const MemoryClass& c) const {
    const size_t k = At(i, j);
    StagePlan s;
    s.first_layer = i;
    s.last_layer = j - 1;
    s.devices = Devices(i, j);
    const double compute = Load(i, j, position);
    s.load_s = ShardedLoadS(compute, ShardingS(i, j, c), ShardingEdge(i, c));
    s.sharding_s = s.load_s - compute;
    s.forward_s = forward_[k];
    s.backward_s = backward_[k];
    s.recompute_s = recompute_in_backward_[k] + (StageRecompute(position) ? recompute_stage_[k] : 0.0);
    s.peak_memory_bytes = Memory(i, j, position, c);
    s.memory = StageMemoryParts(footprint_[k], stash_[k], InFlight(position, c),
                                problem_.sharding, c.ways);
    return s;
  }

 private:
  size_t At(int i, int j) const { return static_cast<size_t>(i) * (n_ + 1) + j; }

  // A layer edge with its send time at this table's level (× v: every virtual stage sends): until
  // the receiver has it (send_s: with Megatron's scatter/gather, the receiving stage's all-gather
  // too) and until the sender is done (sent_s: the point-to-point part alone).
  struct Link {
    int from, to;
    double bytes, send_s, sent_s;
  };

  // Stage [i, j) runs its forward from the sends into it; its backward from the sends out of it
  // (and, with stage recompute, after re-running its forward). The forward finish of a layer l of
  // [i, j) depends on i but not on j, and its backward finish on j but not on i (a layer's
  // successors come after it), so each is computed once per (i, l) and (l, j): O(n²) cells in
  // O(n² + n·edges), with each cell's value computed by the same operations in the same order as
  // stage by stage. Only the backward after a stage recompute starts at the stage's own recompute
  // time, so it is run per stage, and only where the problem recomputes.
  void FillForward() {
    const auto& L = table_.layers;
    std::vector<double> finish(static_cast<size_t>(n_));
    for (int i = 0; i < n_; ++i) {
      if (!bound_[static_cast<size_t>(i)]) continue;  // no stage starts here
      StageFootprint f;
      double fw = 0, recompute = 0, step = 0, fw_sum = 0, bw_sum = 0, rc_sum = 0;
      double expert_step = 0, experts = 0;
      bool tp = false;
      for (int l = i; l < n_; ++l) {  // the stage [i, l + 1)
        double start = 0;
        for (const Link& e : preds_[l]) {
          if (e.from >= i) {
            start = std::max(start, finish[e.from]);
          } else {
            start = std::max(start, e.send_s);
            f.incoming += e.bytes;
          }
        }
        finish[l] = start + L[l].forward_s;
        fw = std::max(fw, finish[l]);
        recompute += L[l].RecomputeForwardS();
        f.Add(L[l]);
        if (split_) {
          f.gathered_away =
              std::max(f.gathered_away, LayerGatheredAway(L[l], problem_.sharding, *split_));
        }
        step += L[l].optimizer_step_s;
        expert_step += L[l].ExpertShare() * L[l].optimizer_step_s;
        experts += L[l].expert_weight_bytes;
        fw_sum += L[l].forward_s;
        bw_sum += L[l].backward_s;
        rc_sum += L[l].backward_recompute_s;
        tp = tp || L[l].tensor_parallel;
        const size_t k = At(i, l + 1);
        load_plain_[k] = fw;  // the forward critical path; FillBackward adds the backward's
        footprint_[k] = f;
        stash_[k] = f.Stash(problem_.recompute);
        // Interleaved, the model's last layer (the LM head and its loss) runs in the last stage's
        // final chunk, whose forward is followed at once by its backward, as 1F1B's last stage:
        // it keeps one micro-batch, not the stage's warm-up count (step_model.hpp).
        if (problem_.schedule == PipelineSchedule::kInterleaved && l + 1 == n_ &&
            !problem_.recompute) {
          stash_[k] -= L[l].activation_bytes;
        }
        optimizer_step_[k] = step;
        expert_optimizer_step_[k] = expert_step;
        expert_weight_[k] = experts;
        forward_[k] = fw_sum;
        backward_[k] = bw_sum;
        recompute_in_backward_[k] = rc_sum;
        recompute_stage_[k] = recompute;
        has_tp_[k] = tp ? 1 : 0;
      }
    }
  }

  void FillBackward() {
    const auto& L = table_.layers;
    std::vector<double> finish(static_cast<size_t>(n_));
    // From `ready`, layers j − 1 down to i; `each(l, phase)` sees the phase of [l, j) so far.
    auto backward = [&](int i, int j, double ready, auto&& each) {
      double phase = 0;
      for (int l = j - 1; l >= i; --l) {
        double start = ready;
        for (const Link& e : succs_[l]) start = std::max(start, e.to < j ? finish[e.to] : e.send_s);
        finish[l] = start + (L[l].backward_s + L[l].backward_recompute_s);
        phase = std::max(phase, finish[l]);
        each(l, phase);
      }
      return phase;
    };
    for (int j = 1; j <= n_; ++j) {  // every stage [l, j) at once: its phase is a suffix max
      if (!bound_[static_cast<size_t>(j)]) continue;  // no stage ends here
      backward(0, j, 0.0, [&](int l, double phase) {
        const size_t k = At(l, j);
        const double fw = load_plain_[k];
        load_plain_[k] = fw + phase;
        if (problem_.recompute) load_recompute_[k] = fw;  // completed below
      });
    }
    if (!problem_.recompute) return;  // Load() reads load_recompute_ only when recomputing
    for (int i = 0; i < n_; ++i) {
      for (int j = i + 1; j <= n_; ++j) {
        if (!bound_[static_cast<size_t>(i)] || !bound_[static_cast<size_t>(j)]) continue;
        const size_t k = At(i, j);
        load_recompute_[k] =
            load_recompute_[k] + backward(i, j, recompute_stage_[k], [](int, double) {});
      }
    }
  }

  // Blocking sends (PipelineSends::kBlocking): stage [i, j) also waits for its own sends out, one
  // per edge with exactly one end in it — to a later stage (i ≤ from < j ≤ to: its activations)
  // or from an earlier one (from < i ≤ to < j: the gradient it sends back). Each edge adds its
  // send to a rectangle of (i, j) cells, summed by a 2-D difference array: O(n² + edges).
  void AddSendsOut() {
    const size_t side = static_cast<size_t>(n_) + 2;
    std::vector<double> diff(side * side, 0.0);
    auto add = [&](int i0, int i1, int j0, int j1, double x) {  // i in [i0, i1], j in [j0, j1]
      if (i0 > i1 || j0 > j1) return;
      diff[i0 * side + j0] += x;
      diff[i0 * side + j1 + 1] -= x;
      diff[(i1 + 1) * side + j0] -= x;
      diff[(i1 + 1) * side + j1 + 1] += x;
    };
    for (int l = 0; l < n_; ++l) {
      for (const Link& e : succs_[l]) {
        add(0, e.from, e.from + 1, e.to, e.sent_s);      // activations out
        add(e.from + 1, e.to, e.to + 1, n_, e.sent_s);  // the gradient back
      }
    }
    for (size_t i = 0; i < side; ++i) {
      for (size_t j = 0; j < side; ++j) {
        double& x = diff[i * side + j];
        if (i > 0) x += diff[(i - 1) * side + j];
        if (j > 0) x += diff[i * side + j - 1];
        if (i > 0 && j > 0) x -= diff[(i - 1) * side + j - 1];
      }
    }
    for (int i = 0; i < n_; ++i) {
      for (int j = i + 1; j <= n_; ++j) {
        const double out = diff[static_cast<size_t>(i) * side + static_cast<size_t>(j)];
        load_plain_[At(i, j)] += out;
        load_recompute_[At(i, j)] += out;
      }
    }
  }

  int n_, t_;
  const PlacementProblem& problem_;
  const LayerTable& table_;
  std::optional<ShardDivisors> split_;
  std::vector<char> bound_;  // per layer index: a stage may start or end there
  std::vector<std::vector<Link>> preds_, succs_;
  std::vector<StageFootprint> footprint_;
  std::vector<double> load_plain_, load_recompute_, stash_, optimizer_step_, expert_optimizer_step_,
      expert_weight_, forward_, backward_, recompute_in_backward_, recompute_stage_;
  std::vector<char> has_tp_;
};

// The sync of every first stage [0, j) for one d, computed once per width (it is the hot loop's
// only collective, and it does not depend on the level or the memory class); what of it is
// exposed depends on the stage count too, and is cheap.
class SyncTable {
 public:
  explicit SyncTable(const PlacementProblem& p) : p_(p) {}
  const std::vector<SyncParts>& For(const StageTable& st, std::int64_t d) {
    std::vector<SyncParts>& v = by_d_[d];
    if (v.empty()) {
      v.assign(static_cast<size_t>(st.n() + 1), SyncParts{});
      for (int j = 1; j <= st.n(); ++j) {
        v[static_cast<size_t>(j)] = StageSyncPartsS(p_, st.Table(), st.t(), d, st.Weights(0, j));
      }
    }
    return v;
  }

 private:
  const PlacementProblem& p_;
  std::map<std::int64_t, std::vector<SyncParts>> by_d_;
};

// Lexicographic preference among equal times: smaller d, fewer stages, earlier split, fewer a = 1.
using Key = std::tuple<double, std::int64_t, int, int, int>;

// Why a width's experts cannot fold over data-parallel replicas ("" when they can, or are not
// folded): context parallelism's replicas would hold the same experts.
std::string FoldRefusal(const LayerTable& table) {
  if (table.expert_fold <= 1 || table.weight_replicas <= 1) return "";
  return "experts folded over " + std::to_string(table.expert_fold) +
         " data-parallel replicas with weight replicas (context parallelism) are not modelled";
}

// The stage table key of a memory class: the level, and the class's divisors when the table's
// gathered layers depend on them (SplitsGather).
using TableKey = std::tuple<int, std::int64_t, std::int64_t>;
std::optional<ShardDivisors> SplitOf(const PlacementProblem& p, const MemoryClass& c) {
  return SplitsGather(p.sharding, c.ways) ? std::optional(c.ways) : std::nullopt;
}

}  // namespace

std::string PlacementProblem::Validate() const {
  if (widths.empty()) return "no tensor-parallel width given";
  if (std::string err = StepSettings::Validate(); !err.empty()) return err;
  if (!(hbm_bytes > 0)) return "hbm_bytes must be > 0";
  for (const auto& [t, table] : widths) {
    std::string w = "width " + std::to_string(t) + ": ";
    if (t < 1) return w + "widths must be >= 1";
    if (table.layers.empty()) return w + "no layers";
    if (!Finite(table.tied_gradient_bytes)) return w + "tied_gradient_bytes must be >= 0";
    if (table.weight_replicas < 1 || t % table.weight_replicas != 0) {
      return w + "weight_replicas must divide the width, got " +
             std::to_string(table.weight_replicas);
    }
    if (table.expert_fold < 1) {
      return w + "expert_fold must be >= 1, got " + std::to_string(table.expert_fold);
    }
    const int n = static_cast<int>(table.layers.size());
    for (const auto& l : table.layers) {
      for (double v : {l.forward_s, l.backward_s, l.RecomputeForwardS(), l.backward_recompute_s,
                       l.optimizer_step_s, l.weight_bytes, l.cached_weight_bytes, l.GradientBytes(),
                       l.optimizer_state_bytes, l.activation_bytes, l.working_bytes}) {
        if (!Finite(v)) return w + "layer '" + l.name + "' has a negative or non-finite value";
      }
      if (!Finite(l.expert_weight_bytes) || l.expert_weight_bytes > l.weight_bytes) {
        return w + "layer '" + l.name + "': expert_weight_bytes must be within its weight_bytes";
      }
    }
    for (const auto& e : table.edges) {
      if (e.from < 0 || e.to >= n || e.from >= e.to) {
        return w + "edge " + std::to_string(e.from) + " -> " + std::to_string(e.to) +
               " is not a forward edge between existing layers (layers must be listed in a "
               "topological order)";
      }
      if (!Finite(e.bytes)) return w + "edge " + std::to_string(e.from) + " -> " +
                                   std::to_string(e.to) + " has invalid bytes";
    }
  }
  return "";
}

PlacementPlan PlacementSearch::Place(const PlacementProblem& problem) const {
  PlacementPlan best;
  if (std::string err = problem.Validate(); !err.empty()) {
    best.reason = err;
    return best;
  }
  const std::int64_t K = problem.num_accelerators;
  const std::int64_t B = problem.MicroBatches();
  best.reason = "no placement fits: every stage split exceeds the HBM (" +
                std::to_string(problem.hbm_bytes) + " bytes) or needs more accelerators than " +
                std::to_string(K);
  // The d worth evaluating, multiples of a width's expert fold j (1: every d): where ⌊K/d⌋ or
  // ⌈B/d⌉ changes from the previous multiple (for equal values the smallest d is best).
  const std::int64_t dmax = std::min<std::int64_t>(K, B);
  auto ds_of = [&](std::int64_t j) {
    std::vector<std::int64_t> ds;
    for (std::int64_t d = j; d <= dmax; d += j) {
      const std::int64_t e = d - j;
      if (e > 0 && K / d == K / e && (B + d - 1) / d == (B + e - 1) / e) continue;
      ds.push_back(d);
    }
    return ds;
  };
  std::optional<Key> best_key;
  for (const auto& [t, table] : problem.widths) {
    if (std::string why = FoldRefusal(table); !why.empty()) {
      if (problem.widths.size() == 1) best.reason = "width " + std::to_string(t) + ": " + why;
      continue;
    }
    const int n = static_cast<int>(table.layers.size());
    int q = 0;
    if (t > 1) {
      for (const auto& l : table.layers) q += l.tensor_parallel ? 0 : 1;
    }
    const int M = q + 1;
    // Bubble `bound`: the floor every covering's sum of loads is above (StageLoadFloor). Only
    // `stages` reads the coverings' own sums (`bottleneck` ignores them), so only it keeps them.
    const double floor = problem.bubble == PipelineBubble::kBound ? StageLoadFloor(table) : 0.0;
    const bool sums = problem.bubble == PipelineBubble::kStages;
    // The (level, memory class) groups of (d, s) pairs; a DP per group.
    struct Group {
      int level;
      MemoryClass cls;
      std::vector<std::pair<std::int64_t, int>> pairs;  // (d, s)
    };
    std::vector<Group> groups;
    for (std::int64_t d : ds_of(table.expert_fold)) {
      for (int s = 1; s <= n; ++s) {
        if (static_cast<std::int64_t>(s) > K / d) break;  // every stage needs a device
        const int level = PipelineLevel(problem, t, s, d);
        const MemoryClass cls = ClassOf(problem, t, d, s, table);
        auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
          return g.level == level && g.cls == cls;
        });
        if (it == groups.end()) it = groups.insert(groups.end(), Group{level, cls, {}});
        it->pairs.emplace_back(d, s);
      }
    }
    std::map<TableKey, StageTable> tables;
    SyncTable syncs(problem);
    // Per group: the suffix DP, and the first stages [0, j) that fit at each position s.
    struct FirstStage {
      int j;
      std::int64_t a0;  // its devices
      double load_s, step_s, expert_step_s;
    };
    struct Solved {
      const Group* group;
      const StageTable* st;
      std::vector<double> sharding;  // per stage, when the memory class runs collectives
      std::vector<double> edge;      // per first layer: what of them no compute hides
      std::vector<double> dp;        // dp[(i, s, m)]: see below
      std::vector<double> sum;       // the sum of the loads of dp's covering (PipelineTimeS)
      std::vector<int> cut;
      std::vector<std::vector<FirstStage>> first;  // by s
      // By s, once computed: min over the first stages and m of max(rest, load) (+∞ when none).
      std::vector<std::optional<double>> fastest;
      double Load(int i, int j, int position, int n) const {
        const double compute = st->Load(i, j, position);
        return sharding.empty()
                   ? compute
                   : ShardedLoadS(compute, sharding[static_cast<size_t>(i) * (n + 1) + j],
                                  edge[static_cast<size_t>(i)]);
      }
    };
    // dp[(i, s, m)]: min over coverings of the suffix [i, n) by s stages, m of them with a = 1, of
    // their largest load; sum[(i, s, m)] the sum of that covering's loads. The step's pipeline time
    // m·max + (sum − max)/v is then that of the min-max covering: the sums of coverings differ
    // only by what their cuts add (sends, recompute by position), small beside a stage (on 658
    // random problems the plan is the brute force's best but in 2: placement_search_test.cpp).
    // Laid out by s, then i: the inner loop over the cut j reads dp[(j, s − 1, ·)] contiguously.
    auto idx = [&](int i, int s, int m) { return (static_cast<size_t>(s) * (n + 1) + i) * M + m; };
    std::vector<Solved> solved;
    solved.reserve(groups.size());
    for (const Group& group : groups) {
      const std::optional<ShardDivisors> split = SplitOf(problem, group.cls);
      const TableKey key{group.level, split ? split->ways : 0, split ? split->expert_ways : 0};
      auto slot = tables.find(key);
      if (slot == tables.end()) {
        slot = tables
                   .emplace(std::piecewise_construct, std::forward_as_tuple(key),
                            std::forward_as_tuple(table, problem, t, group.level, split))
                   .first;
      }
      Solved& g = solved.emplace_back();
      g.group = &group;
      g.st = &slot->second;
      const StageTable& st = slot->second;
      int smax = 0;
      for (const auto& pr : group.pairs) smax = std::max(smax, pr.second);
      // A stage's load per micro-batch: its compute, or the sharding's collectives when longer
      // (computed once per stage here, not in the loops below).
      if (group.cls.comm_d > 0) {
        g.sharding.assign(static_cast<size_t>(n + 1) * (n + 1), 0.0);
        g.edge.assign(static_cast<size_t>(n), 0.0);
        std::vector<double> layer(static_cast<size_t>(n));
        for (int l = 0; l < n; ++l) layer[static_cast<size_t>(l)] = st.LayerShardingS(l, group.cls);
        for (int i = 0; i < n; ++i) {
          g.edge[static_cast<size_t>(i)] = st.ShardingEdge(i, group.cls);
          double sum = 0;  // ShardingS(i, j), summed in its order
          for (int j = i + 1; j <= n; ++j) {
            sum += layer[static_cast<size_t>(j - 1)];
            g.sharding[static_cast<size_t>(i) * (n + 1) + j] = sum;
          }
        }
      }
      g.dp.assign(static_cast<size_t>(n + 1) * (n + 1) * M, kInf);
      if (sums) g.sum.assign(g.dp.size(), 0.0);
      g.cut.assign(g.dp.size(), -1);
      std::vector<double>& dp = g.dp;
      std::vector<double>& sum = g.sum;
      dp[idx(n, 0, 0)] = 0;
      for (int s = 1; s < smax; ++s) {  // suffix DP (the first stage is handled below)
        const bool shorter = st.FitsOnlyShorter(s, group.cls);
        const double in_flight = st.InFlight(s, group.cls);
        for (int i = n - s; i >= 1; --i) {
          for (int j = s == 1 ? n : i + 1; j <= n - (s - 1); ++j) {
            if (!st.FitsAt(i, j, in_flight, group.cls)) {
              if (shorter) break;
              continue;
            }
            const double load = g.Load(i, j, s, n);
            const int delta = st.SingleDevice(i, j);
            for (int mr = 0; mr < M - delta && mr <= s - 1; ++mr) {
              double prev = dp[idx(j, s - 1, mr)];
              if (prev == kInf) continue;
              double v = std::max(prev, load);
              size_t at = idx(i, s, mr + delta);
              if (v < dp[at]) {
                dp[at] = v;
                if (sums) sum[at] = sum[idx(j, s - 1, mr)] + load;
                g.cut[at] = j;
              }
            }
          }
        }
      }
      g.first.resize(static_cast<size_t>(smax) + 1);
      g.fastest.assign(static_cast<size_t>(smax) + 1, std::nullopt);
      for (const auto& pr : group.pairs) {
        const int s = pr.second;
        if (g.fastest[s]) continue;  // done for an earlier d
        const bool shorter = st.FitsOnlyShorter(s, group.cls);
        const double in_flight = st.InFlight(s, group.cls);
        double fastest = kInf;
        for (int j = s == 1 ? n : 1; j <= n - (s - 1); ++j) {
          if (!st.FitsAt(0, j, in_flight, group.cls)) {
            if (shorter) break;
            continue;
          }
          const FirstStage f{j, st.Devices(0, j), g.Load(0, j, s, n), st.OptimizerStepS(0, j),
                             st.ExpertOptimizerStepS(0, j)};
          g.first[s].push_back(f);
          for (int mr = 0; mr < M && mr <= s - 1; ++mr) {
            fastest = std::min(fastest, std::max(dp[idx(j, s - 1, mr)], f.load_s));
          }
        }
        g.fastest[s] = fastest;
      }
    }
    // First stage [0, j) at position s, the rest from dp: the (d, s) pairs in increasing order of
    // a lower bound on their time, the pipeline's with every stage at the fastest max(rest,
    // load) over their first stages and nothing more (the other stages' fill and drain, the sync,
    // optimizer step and tied embedding add ≥ 0; the device limit only removes candidates); once
    // it exceeds the best time, no later pair can win. The winner is the least Key, which does not
    // depend on the order candidates are met in.
    struct Pair {
      double bound;
      std::size_t group;
      std::int64_t d;
      int s;
    };
    std::vector<Pair> pairs;
    for (std::size_t gi = 0; gi < solved.size(); ++gi) {
      for (const auto& [d, s] : solved[gi].group->pairs) {
        const double fastest = *solved[gi].fastest[s];
        if (fastest == kInf) continue;  // no first stage fits, or no rest completes one
        pairs.push_back(
            {StepTimeS(PipelineTimeS(problem, d, s, fastest, fastest), 0, 0, 0), gi, d, s});
      }
    }
    // Met through a heap, so the pairs past the break are never sorted (a full stable sort was
    // 6% of a search's time); the order among equal bounds does not matter (the least Key wins).
    auto later = [](const Pair& x, const Pair& y) { return x.bound > y.bound; };
    std::make_heap(pairs.begin(), pairs.end(), later);
    while (!pairs.empty()) {
      std::pop_heap(pairs.begin(), pairs.end(), later);
      const Pair pair = pairs.back();
      pairs.pop_back();
      if (best_key && pair.bound > std::get<0>(*best_key)) break;
      const Solved& g = solved[pair.group];
      const Group& group = *g.group;
      const StageTable& st = *g.st;
      const std::int64_t d = pair.d;
      const int s = pair.s;
      const std::int64_t kd = K / d;
      const std::vector<SyncParts>& sync = syncs.For(st, d);
      const double tied = TiedEmbeddingS(problem, t, d, s, st.TiedGradientBytes());
      for (const FirstStage& f : g.first[s]) {
        const int j = f.j;
        const double optimizer =
            StageOptimizerStepS(problem, table, t, d, f.step_s, f.expert_step_s);
        const double exposed =
            ExposedGradientSyncS(problem, sync[static_cast<size_t>(j)], st.SyncWindowOf(j, s));
        for (int mr = 0; mr < M && mr <= s - 1; ++mr) {
          const double rest = g.dp[idx(j, s - 1, mr)];
          if (rest == kInf) continue;
          const std::int64_t devices = f.a0 + mr + static_cast<std::int64_t>(s - 1 - mr) * t;
          if (devices > kd) continue;
          const double loads = sums ? f.load_s + g.sum[idx(j, s - 1, mr)] : floor;
          const double time =
              StepTimeS(PipelineTimeS(problem, d, s, std::max(rest, f.load_s), loads), exposed,
                        optimizer, tied);
          // `time` takes the first stage's reduction alone (the paper's formula), a lower bound
          // on the step FinishStep finds, which waits for every stage's: it prunes, the step
          // ranks.
          if (best_key && !(Key{time, d, s, j, mr} < *best_key)) continue;
          PlacementPlan plan;
          plan.tensor_parallel = t;
          plan.data_parallel = static_cast<int>(d);
          plan.pipeline_stages = s;
          plan.stages.push_back(st.MakeStage(0, j, s, group.cls));
          for (int i = j, ss = s - 1, m = mr; ss > 0; --ss) {
            int next = g.cut[idx(i, ss, m)];
            plan.stages.push_back(st.MakeStage(i, next, ss, group.cls));
            m -= st.SingleDevice(i, next);
            i = next;
          }
          FinishStep(problem, table, group.level, plan);
          const Key key{plan.time_per_batch_s, d, s, j, mr};
          if (best_key && !(key < *best_key)) continue;
          best = plan;
          best_key = key;
        }
      }
    }
    // A later (larger) width wins only when strictly faster.
    if (best_key) best_key = Key{std::get<0>(*best_key), -1, -1, -1, -1};
  }
  if (best.feasible) FillStepEnergy(problem, problem.widths.at(best.tensor_parallel), best);
  return best;
}

PlacementPlan PlacementSearch::Evaluate(const PlacementProblem& problem,
                                        const FixedStrategy& fixed) const {
  PlacementPlan plan;
  plan.tensor_parallel = fixed.tensor_parallel;
  plan.data_parallel = fixed.data_parallel;
  plan.pipeline_stages = fixed.pipeline_stages;
  std::string name = "fixed strategy {p " + std::to_string(fixed.pipeline_stages) + ", d " +
                     std::to_string(fixed.data_parallel) + ", t " +
                     std::to_string(fixed.tensor_parallel) + "}: ";
  if (std::string err = problem.Validate(); !err.empty()) {
    plan.reason = name + err;
    return plan;
  }
  auto it = problem.widths.find(fixed.tensor_parallel);
  if (it == problem.widths.end()) {
    plan.reason = name + "no layer table for tensor-parallel width " +
                  std::to_string(fixed.tensor_parallel);
    return plan;
  }
  const int n = static_cast<int>(it->second.layers.size());
  const int p = fixed.pipeline_stages, d = fixed.data_parallel;
  if (p < 1 || d < 1) {
    plan.reason = name + "p and d must be >= 1";
    return plan;
  }
  if (p > n) {
    plan.reason = name + std::to_string(p) + " stages for " + std::to_string(n) + " layers";
    return plan;
  }
  // Before anything multiplies p, d and t (each stage needs at least one device per replica).
  if (static_cast<std::int64_t>(p) * d > problem.num_accelerators) {
    plan.reason = name + "needs " + (fixed.tensor_parallel > 1 ? "at least " : "") +
                  std::to_string(static_cast<std::int64_t>(p) * d) + " accelerators, only " +
                  std::to_string(problem.num_accelerators) + " available";
    return plan;
  }
  if (d > problem.MicroBatches()) {
    plan.reason = name + "d exceeds the " + std::to_string(problem.MicroBatches()) +
                  " micro-batches per batch";
    return plan;
  }
  if (std::string why = FoldRefusal(it->second); !why.empty()) {
    plan.reason = name + why;
    return plan;
  }
  if (d % it->second.expert_fold != 0) {
    plan.reason = name + "the experts fold over " + std::to_string(it->second.expert_fold) +
                  " data-parallel replicas, which do not divide d " + std::to_string(d);
    return plan;
  }
  std::vector<int> starts = {0};
  if (fixed.stage_starts.empty()) {
    for (int k = 0, i = 0; k + 1 < p; ++k) {
      i += n / p + (k < n % p ? 1 : 0);
      starts.push_back(i);
    }
  } else {
    if (static_cast<int>(fixed.stage_starts.size()) != p - 1) {
      plan.reason = name + "expected " + std::to_string(p - 1) + " stage boundaries, got " +
                    std::to_string(fixed.stage_starts.size());
      return plan;
    }
    for (int b : fixed.stage_starts) {
      if (b <= starts.back() || b >= n) {
        plan.reason = name + "stage boundaries must increase within 1.." + std::to_string(n - 1);
        return plan;
      }
      starts.push_back(b);
    }
  }
  starts.push_back(n);
  const int level = PipelineLevel(problem, fixed.tensor_parallel, p, d);
  const MemoryClass cls = ClassOf(problem, fixed.tensor_parallel, d, p, it->second);
  StageTable st(it->second, problem, fixed.tensor_parallel, level, SplitOf(problem, cls), &starts);
  std::int64_t devices = 0;
  std::string overflow;  // the first stage above the HBM
  for (int k = 0; k < p; ++k) {
    const int i = starts[k], j = starts[k + 1];
    const int position = p - k;
    plan.stages.push_back(st.MakeStage(i, j, position, cls));
    devices += st.Devices(i, j);
    if (overflow.empty() && !st.Fits(i, j, position, cls)) {
      overflow = name + "stage " + std::to_string(k) + " (layers " + std::to_string(i) + "-" +
                 std::to_string(j - 1) + ") needs " + BytesText(st.Memory(i, j, position, cls)) +
                 " > HBM " + BytesText(problem.hbm_bytes) + ": over by " +
                 BytesText(st.Memory(i, j, position, cls) - problem.hbm_bytes);
    }
  }
  if (devices * d > problem.num_accelerators) {
    plan.reason = !overflow.empty() ? overflow
                                    : name + "needs " + std::to_string(devices * d) +
                                          " accelerators, only " +
                                          std::to_string(problem.num_accelerators) + " available";
    return plan;
  }
  FinishStep(problem, it->second, level, plan);
  FillStepEnergy(problem, it->second, plan);
  if (!overflow.empty()) {
    // Infeasible, with what it would take if it fitted: time, breakdown, energy, every stage's
    // memory (phaze predict prints them beside the overflow).
    plan.feasible = false;
    plan.reason = overflow;
  }
  return plan;
}

}  // namespace phaze
