#include "phaze/placement/placement_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace phaze {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool Finite(double v) { return std::isfinite(v) && v >= 0; }

// Everything about contiguous stages [i, j) of one width's layer order, precomputed once.
class StageTable {
 public:
  StageTable(const LayerTable& table, const PlacementProblem& problem, int t)
      : n_(static_cast<int>(table.layers.size())), t_(t), problem_(problem), table_(table) {
    preds_.resize(n_);
    succs_.resize(n_);
    for (const auto& e : table.edges) {
      preds_[e.to].push_back(e);
      succs_[e.from].push_back(e);
    }
    const size_t cells = static_cast<size_t>(n_ + 1) * (n_ + 1);
    load_plain_.assign(cells, 0);
    load_recompute_.assign(cells, 0);
    base_memory_.assign(cells, 0);
    stash_.assign(cells, 0);
    weight_.assign(cells, 0);
    has_tp_.assign(cells, 0);
    std::vector<double> finish(static_cast<size_t>(n_));
    for (int i = 0; i < n_; ++i) {
      for (int j = i + 1; j <= n_; ++j) Fill(i, j, finish);
    }
  }

  int n() const { return n_; }
  int t() const { return t_; }
  double Load(int i, int j, int position) const {
    return problem_.recompute && position > 1 ? load_recompute_[At(i, j)] : load_plain_[At(i, j)];
  }
  double Memory(int i, int j, int position) const {
    return base_memory_[At(i, j)] + (position - 1) * stash_[At(i, j)];
  }
  bool Fits(int i, int j, int position) const {
    return Memory(i, j, position) <= problem_.hbm_bytes;
  }
  double WeightBytes(int i, int j) const { return weight_[At(i, j)]; }
  // Devices of the stage: t if it holds a tensor-parallel layer, else 1.
  int Devices(int i, int j) const { return has_tp_[At(i, j)] ? t_ : 1; }
  // Counts toward m (stages with a = 1) only when t > 1.
  int SingleDevice(int i, int j) const { return t_ > 1 && !has_tp_[At(i, j)] ? 1 : 0; }

 private:
  size_t At(int i, int j) const { return static_cast<size_t>(i) * (n_ + 1) + j; }

  void Fill(int i, int j, std::vector<double>& finish) {
    const auto& L = table_.layers;
    const double bw = problem_.link_bandwidth_bytes_per_s;
    double fw = 0, recompute = 0, memory = 0, act = 0, weight = 0, incoming = 0;
    bool tp = false;
    for (int l = i; l < j; ++l) {
      double start = 0;
      for (const auto& e : preds_[l]) {
        if (e.from >= i) {
          start = std::max(start, finish[e.from]);
        } else {
          start = std::max(start, e.bytes / bw);
          incoming += e.bytes;
        }
      }
      finish[l] = start + L[l].forward_s;
      fw = std::max(fw, finish[l]);
      recompute += L[l].RecomputeForwardS();
      memory += L[l].weight_bytes + L[l].GradientBytes() + L[l].optimizer_state_bytes +
                L[l].activation_bytes;
      act += L[l].activation_bytes;
      weight += L[l].weight_bytes;
      tp = tp || L[l].tensor_parallel;
    }
    auto backward = [&](double ready) {
      double phase = 0;
      for (int l = j - 1; l >= i; --l) {
        double start = ready;
        for (const auto& e : succs_[l]) {
          start = std::max(start, e.to < j ? finish[e.to] : e.bytes / bw);
        }
        finish[l] = start + L[l].backward_s;
        phase = std::max(phase, finish[l]);
      }
      return phase;
    };
    // `finish` is reused for backward finishes (forward finishes are no longer needed).
    double bw_plain = backward(0.0);
    double bw_recompute = backward(recompute);
    size_t k = At(i, j);
    load_plain_[k] = fw + bw_plain;
    load_recompute_[k] = fw + bw_recompute;
    base_memory_[k] = memory;
    stash_[k] = problem_.recompute ? incoming : act;
    weight_[k] = weight;
    has_tp_[k] = tp ? 1 : 0;
  }

  int n_, t_;
  const PlacementProblem& problem_;
  const LayerTable& table_;
  std::vector<std::vector<PlacementEdge>> preds_, succs_;
  std::vector<double> load_plain_, load_recompute_, base_memory_, stash_, weight_;
  std::vector<char> has_tp_;
};

std::int64_t MicroBatches(const PlacementProblem& p) { return p.global_batch / p.micro_batch; }

double SyncSeconds(const PlacementProblem& p, int d, double first_stage_weight_bytes) {
  return 4.0 * (d - 1) / d * first_stage_weight_bytes / p.link_bandwidth_bytes_per_s;
}

// Fills time, throughput and shares from the stages already in `plan`.
void Finish(const PlacementProblem& p, const StageTable& st, PlacementPlan& plan) {
  const std::int64_t B = MicroBatches(p);
  const int d = plan.data_parallel;
  const int s = plan.pipeline_stages;
  double max_load = 0;
  for (const auto& stage : plan.stages) max_load = std::max(max_load, stage.load_s);
  const double sync =
      SyncSeconds(p, d, st.WeightBytes(plan.stages[0].first_layer, plan.stages[0].last_layer + 1));
  const double steps = static_cast<double>((B + d - 1) / d + s - 1);
  plan.micro_batches = B;
  plan.max_stage_load_s = max_load;
  plan.time_per_batch_s = steps * max_load + sync;
  plan.throughput_samples_per_s = static_cast<double>(p.global_batch) / plan.time_per_batch_s;
  plan.bubble_share = (s - 1) * max_load / plan.time_per_batch_s;
  plan.sync_share = sync / plan.time_per_batch_s;
  plan.feasible = true;
}

StagePlan MakeStage(const StageTable& st, int i, int j, int position) {
  return StagePlan{i, j - 1, st.Devices(i, j), st.Load(i, j, position), st.Memory(i, j, position)};
}

}  // namespace

std::string PlacementProblem::Validate() const {
  if (widths.empty()) return "no tensor-parallel width given";
  if (num_accelerators < 1) return "num_accelerators must be >= 1";
  if (global_batch < 1 || micro_batch < 1) return "global_batch and micro_batch must be >= 1";
  if (global_batch % micro_batch != 0) {
    return "global_batch " + std::to_string(global_batch) + " is not a multiple of micro_batch " +
           std::to_string(micro_batch);
  }
  if (!(link_bandwidth_bytes_per_s > 0) || !std::isfinite(link_bandwidth_bytes_per_s)) {
    return "link_bandwidth_bytes_per_s must be > 0";
  }
  if (!(hbm_bytes > 0)) return "hbm_bytes must be > 0";
  for (const auto& [t, table] : widths) {
    std::string w = "width " + std::to_string(t) + ": ";
    if (t < 1) return w + "widths must be >= 1";
    if (table.layers.empty()) return w + "no layers";
    const int n = static_cast<int>(table.layers.size());
    for (const auto& l : table.layers) {
      for (double v : {l.forward_s, l.backward_s, l.RecomputeForwardS(), l.weight_bytes,
                       l.GradientBytes(), l.optimizer_state_bytes, l.activation_bytes}) {
        if (!Finite(v)) return w + "layer '" + l.name + "' has a negative or non-finite value";
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
  const std::int64_t B = MicroBatches(problem);
  best.reason = "no placement fits: every stage split exceeds the HBM (" +
                std::to_string(problem.hbm_bytes) + " bytes) or needs more accelerators than " +
                std::to_string(K);
  for (const auto& [t, table] : problem.widths) {
    StageTable st(table, problem, t);
    const int n = st.n();
    int q = 0;
    if (t > 1) {
      for (const auto& l : table.layers) q += l.tensor_parallel ? 0 : 1;
    }
    const int M = q + 1;
    // dp[(i, s, m)]: min over coverings of the suffix [i, n) by s stages, m of them with a = 1.
    auto idx = [&](int i, int s, int m) {
      return (static_cast<size_t>(i) * (n + 1) + s) * M + m;
    };
    std::vector<double> dp(static_cast<size_t>(n + 1) * (n + 1) * M, kInf);
    std::vector<int> cut(dp.size(), -1);
    dp[idx(n, 0, 0)] = 0;
    for (int s = 1; s < n; ++s) {  // suffix DP (the first stage is handled below)
      for (int i = n - s; i >= 1; --i) {
        for (int j = i + 1; j <= n - (s - 1); ++j) {
          if (s == 1 && j != n) continue;
          if (!st.Fits(i, j, s)) continue;
          const double load = st.Load(i, j, s);
          const int delta = st.SingleDevice(i, j);
          for (int mr = 0; mr < M - delta && mr <= s - 1; ++mr) {
            double prev = dp[idx(j, s - 1, mr)];
            if (prev == kInf) continue;
            double v = std::max(prev, load);
            size_t at = idx(i, s, mr + delta);
            if (v < dp[at]) {
              dp[at] = v;
              cut[at] = j;
            }
          }
        }
      }
    }
    // First stage [0, j) at position s, the rest from dp; evaluate only the d at which ⌊K/d⌋ or
    // ⌈B/d⌉ changes (for equal values the smallest d has the smallest sync term).
    const std::int64_t dmax = std::min<std::int64_t>(K, B);
    for (std::int64_t d = 1; d <= dmax; ++d) {
      if (d > 1 && K / d == K / (d - 1) && (B + d - 1) / d == (B + d - 2) / (d - 1)) continue;
      const std::int64_t kd = K / d;
      const double steps_base = static_cast<double>((B + d - 1) / d);
      for (int s = 1; s <= n; ++s) {
        for (int j = 1; j <= n - (s - 1); ++j) {
          if (s == 1 && j != n) continue;
          if (!st.Fits(0, j, s)) continue;
          const std::int64_t a0 = st.Devices(0, j);
          const double load0 = st.Load(0, j, s);
          const double sync = SyncSeconds(problem, static_cast<int>(d), st.WeightBytes(0, j));
          for (int mr = 0; mr < M && mr <= s - 1; ++mr) {
            const double rest = dp[idx(j, s - 1, mr)];
            if (rest == kInf) continue;
            const std::int64_t devices = a0 + mr + static_cast<std::int64_t>(s - 1 - mr) * t;
            if (devices > kd) continue;
            const double time = (steps_base + s - 1) * std::max(rest, load0) + sync;
            if (best.feasible && !(time < best.time_per_batch_s)) continue;
            PlacementPlan plan;
            plan.tensor_parallel = t;
            plan.data_parallel = static_cast<int>(d);
            plan.pipeline_stages = s;
            plan.stages.push_back(MakeStage(st, 0, j, s));
            for (int i = j, ss = s - 1, m = mr; ss > 0; --ss) {
              int next = cut[idx(i, ss, m)];
              plan.stages.push_back(MakeStage(st, i, next, ss));
              m -= st.SingleDevice(i, next);
              i = next;
            }
            Finish(problem, st, plan);
            best = plan;
          }
        }
      }
    }
  }
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
  if (d > MicroBatches(problem)) {
    plan.reason = name + "d exceeds the " + std::to_string(MicroBatches(problem)) +
                  " micro-batches per batch";
    return plan;
  }
  StageTable st(it->second, problem, fixed.tensor_parallel);
  std::int64_t devices = 0;
  int i = 0;
  for (int k = 0; k < p; ++k) {
    int len = n / p + (k < n % p ? 1 : 0);
    int position = p - k;
    plan.stages.push_back(MakeStage(st, i, i + len, position));
    devices += st.Devices(i, i + len);
    if (!st.Fits(i, i + len, position)) {
      plan.reason = name + "stage " + std::to_string(k) + " (layers " + std::to_string(i) + "-" +
                    std::to_string(i + len - 1) + ") needs " +
                    std::to_string(st.Memory(i, i + len, position)) + " bytes > HBM " +
                    std::to_string(problem.hbm_bytes);
      return plan;
    }
    i += len;
  }
  if (devices * d > problem.num_accelerators) {
    plan.reason = name + "needs " + std::to_string(devices * d) + " accelerators, only " +
                  std::to_string(problem.num_accelerators) + " available";
    return plan;
  }
  Finish(problem, st, plan);
  return plan;
}

}  // namespace phaze
