#include "phaze/schedule/list_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>
#include <random>

namespace phaze {

std::vector<int> AllCores(int count) {
  std::vector<int> v(count);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

namespace {

// Longest path from each op to a sink, the op's own latency included.
std::vector<double> BottomLevels(const ScheduleProblem& p, const Precedence& prec,
                                 const std::function<double(const ScheduleOp&)>& latency) {
  std::vector<double> level(p.ops.size(), 0);
  const auto& order = prec.Order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    double tail = 0;
    for (int s : prec.Successors()[*it]) tail = std::max(tail, level[s]);
    level[*it] = latency(p.ops[*it]) + tail;
  }
  return level;
}

// List order: among ready ops, the highest priority first (ties: the smallest index).
std::vector<int> PriorityOrder(const ScheduleProblem& p, const Precedence& prec,
                               const std::vector<double>& priority) {
  const int n = static_cast<int>(p.ops.size());
  std::vector<int> indegree(n), order;
  auto cmp = [&](int a, int b) {
    return priority[a] != priority[b] ? priority[a] < priority[b] : a > b;
  };
  std::priority_queue<int, std::vector<int>, decltype(cmp)> ready(cmp);
  for (int i = 0; i < n; ++i) {
    indegree[i] = static_cast<int>(prec.Predecessors()[i].size());
    if (indegree[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : prec.Successors()[i]) {
      if (--indegree[s] == 0) ready.push(s);
    }
  }
  return order;
}

ModeChoice Flipped(ModeChoice mode) {
  return mode == ModeChoice::kIntra ? ModeChoice::kSingle : ModeChoice::kIntra;
}

}  // namespace

ScheduleResult GenerateSchedule(const ScheduleProblem& p, const Precedence& prec,
                                const std::vector<int>& order,
                                const std::vector<ModeChoice>& modes) {
  const int paired = p.PairedCores();
  std::vector<double> tc_free(p.num_tc, 0), vc_free(p.num_vc, 0);
  double barrier = 0;    // finish of the last intra-op op
  double core_done = 0;  // latest finish of any core op placed so far
  ScheduleResult r;
  r.ops.resize(p.ops.size());
  r.stats.path = "list-schedule";
  for (int i : order) {
    const ScheduleOp& op = p.ops[i];
    ScheduledOp& s = r.ops[i];
    double ready = 0;
    for (int q : prec.Predecessors()[i]) ready = std::max(ready, r.ops[q].Finish());
    if (!op.UsesCores()) {
      s.start_s = ready;
      s.duration_s = op.single_core_s;
      r.makespan_s = std::max(r.makespan_s, s.Finish());
      continue;
    }
    // Single-core candidate: the core (pair) giving the earliest start.
    int best = -1;
    double best_start = 0;
    auto consider = [&](int c, double start, bool better_tie) {
      if (best < 0 || start < best_start || (start == best_start && better_tie)) {
        best = c;
        best_start = start;
      }
    };
    const double single_ready = std::max(ready, barrier);
    if (op.cls == ScheduleClass::kFused) {
      for (int c = 0; c < paired; ++c) {
        consider(c, std::max({single_ready, tc_free[c], vc_free[c]}), false);
      }
    } else {
      const bool tensor = op.cls == ScheduleClass::kTensor;
      const auto& mine = tensor ? tc_free : vc_free;
      const auto& other = tensor ? vc_free : tc_free;
      for (int c = 0; c < static_cast<int>(mine.size()); ++c) {
        const double start = std::max(single_ready, mine[c]);
        // Tie-break: keep whole pairs free for fused ops.
        const bool unpaired = c >= paired;
        const bool best_unpaired = best >= paired;
        bool better = false;
        if (best >= 0 && start == best_start) {
          if (unpaired != best_unpaired) {
            better = unpaired;
          } else if (!unpaired) {
            better = other[c] > other[best];
          }
        }
        consider(c, start, better);
      }
    }
    const double intra_start = std::max(ready, core_done);
    const ModeChoice mode = modes[i];
    bool intra = false;
    if (mode == ModeChoice::kIntra) {
      intra = true;
    } else if (mode == ModeChoice::kEarliestFinish) {
      intra = intra_start + op.all_cores_s < best_start + op.single_core_s;
    }
    if (intra) {
      s.intra_op = true;
      s.start_s = intra_start;
      s.duration_s = op.all_cores_s;
      if (op.UsesTensorCore()) s.tensor_cores = AllCores(p.num_tc);
      if (op.UsesVectorCore()) s.vector_cores = AllCores(p.num_vc);
      barrier = s.Finish();
      std::fill(tc_free.begin(), tc_free.end(), std::max(barrier, 0.0));
      std::fill(vc_free.begin(), vc_free.end(), std::max(barrier, 0.0));
    } else {
      s.start_s = best_start;
      s.duration_s = op.single_core_s;
      if (op.UsesTensorCore()) {
        s.tensor_cores = {best};
        tc_free[best] = s.Finish();
      }
      if (op.UsesVectorCore()) {
        s.vector_cores = {best};
        vc_free[best] = s.Finish();
      }
    }
    core_done = std::max(core_done, s.Finish());
    r.makespan_s = std::max(r.makespan_s, s.Finish());
  }
  return r;
}

ScheduleResult HeuristicSchedule(const ScheduleProblem& p, const Precedence& prec) {
  const int n = static_cast<int>(p.ops.size());
  std::vector<std::vector<int>> orders;
  orders.push_back(PriorityOrder(
      p, prec, BottomLevels(p, prec, [](const ScheduleOp& op) { return op.MinLatency(); })));
  orders.push_back(PriorityOrder(
      p, prec, BottomLevels(p, prec, [](const ScheduleOp& op) { return op.single_core_s; })));
  orders.push_back(prec.Order());
  std::vector<std::vector<ModeChoice>> mode_sets;
  mode_sets.emplace_back(n, ModeChoice::kEarliestFinish);
  mode_sets.emplace_back(n, ModeChoice::kSingle);
  std::vector<ModeChoice> fastest(n);
  for (int i = 0; i < n; ++i) {
    fastest[i] = p.ops[i].IntraOpUseful() ? ModeChoice::kIntra : ModeChoice::kSingle;
  }
  mode_sets.push_back(fastest);

  ScheduleResult best;
  const std::vector<int>* best_order = nullptr;
  bool have = false;
  for (const auto& order : orders) {
    for (const auto& modes : mode_sets) {
      ScheduleResult r = GenerateSchedule(p, prec, order, modes);
      if (!have || r.makespan_s < best.makespan_s) {
        best = std::move(r);
        best_order = &order;
        have = true;
      }
    }
  }
  if (!have) return GenerateSchedule(p, prec, prec.Order(), std::vector<ModeChoice>(n));
  // Local search: flip one op's mode at a time (the others keep theirs) while it helps.
  std::vector<ModeChoice> modes(n);
  for (int i = 0; i < n; ++i)
    modes[i] = best.ops[i].intra_op ? ModeChoice::kIntra : ModeChoice::kSingle;
  for (int pass = 0; pass < 3; ++pass) {
    bool improved = false;
    for (int i = 0; i < n; ++i) {
      if (!p.ops[i].IntraOpUseful()) continue;
      modes[i] = Flipped(modes[i]);
      ScheduleResult r = GenerateSchedule(p, prec, *best_order, modes);
      if (r.makespan_s < best.makespan_s) {
        best = std::move(r);
        improved = true;
      } else {
        modes[i] = Flipped(modes[i]);
      }
    }
    if (!improved) break;
  }
  return best;
}

ScheduleResult ImproveSchedule(const ScheduleProblem& p, const Precedence& prec,
                               const ScheduleResult& start, int evaluations) {
  const int n = static_cast<int>(p.ops.size());
  if (n < 2) return start;
  // The list order of `start`: by start time, ties in topological order.
  std::vector<int> rank(n);
  for (int k = 0; k < n; ++k) rank[prec.Order()[k]] = k;
  std::vector<int> order = prec.Order();
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return start.ops[a].start_s != start.ops[b].start_s
               ? start.ops[a].start_s < start.ops[b].start_s
               : rank[a] < rank[b];
  });
  std::vector<ModeChoice> modes(n);
  for (int i = 0; i < n; ++i)
    modes[i] = start.ops[i].intra_op ? ModeChoice::kIntra : ModeChoice::kSingle;
  ScheduleResult best = GenerateSchedule(p, prec, order, modes);
  if (start.makespan_s < best.makespan_s) best = start;
  double current = best.makespan_s;
  std::vector<int> flippable;
  for (int i = 0; i < n; ++i) {
    if (p.ops[i].IntraOpUseful()) flippable.push_back(i);
  }
  std::mt19937 rng(12345u + static_cast<unsigned>(n));
  const double start_theta = 0.02 * best.makespan_s;
  std::vector<int> position(n);
  for (int e = 0; e < evaluations; ++e) {
    // Moves: flip one op's mode, flip two (two single-core ops side by side can beat both
    // intra-op when neither alone does), move one op, or move one and flip it.
    const unsigned kind = flippable.empty() ? 2 : rng() % 4;
    std::vector<int> trial_order = order;
    std::vector<ModeChoice> trial_modes = modes;
    auto flip_one = [&] {
      const int i = flippable[rng() % flippable.size()];
      trial_modes[i] = Flipped(trial_modes[i]);
      return i;
    };
    if (kind <= 1) {
      flip_one();
      if (kind == 1) flip_one();
    } else {
      for (int k = 0; k < n; ++k) position[order[k]] = k;
      const int k = static_cast<int>(rng() % n);
      const int i = order[k];
      int lo = 0, hi = n - 1;
      for (int q : prec.Predecessors()[i]) lo = std::max(lo, position[q] + 1);
      for (int s : prec.Successors()[i]) hi = std::min(hi, position[s] - 1);
      if (hi <= lo) continue;
      const int to = lo + static_cast<int>(rng() % (hi - lo + 1));
      if (to == k) continue;
      trial_order.erase(trial_order.begin() + k);
      trial_order.insert(trial_order.begin() + to, i);
      if (kind == 3 && p.ops[i].IntraOpUseful()) {
        trial_modes[i] = Flipped(trial_modes[i]);
      }
    }
    ScheduleResult r = GenerateSchedule(p, prec, trial_order, trial_modes);
    // Simulated annealing: worse moves pass with probability exp(−Δ/θ), θ cooling from 2% of
    // the start makespan to 0.01% — several single-core ops side by side beat intra-op only
    // together, so the way there goes uphill.
    const double theta = start_theta * std::pow(1e-2 / 2, static_cast<double>(e) / evaluations);
    const double delta = r.makespan_s - current;
    if (delta <= 0 || std::generate_canonical<double, 32>(rng) < std::exp(-delta / theta)) {
      current = r.makespan_s;
      order = std::move(trial_order);
      modes = std::move(trial_modes);
      if (r.makespan_s < best.makespan_s) best = std::move(r);
    }
  }
  return best;
}

namespace {

// Head-body-tail bound of one core class (`uses` picks its ops, `cores` counts them). Every op i
// starts no earlier than its head r_i (longest path to it, ops at their minimum latency) and ends
// no later than T − q_i (q_i: longest path after it). So for a ≤ r_i and b ≤ q_i, the ops of
// S(a, b) = {i : r_i ≥ a, q_i ≥ b} all run inside [a, T − b], where each keeps the class's cores
// busy for at least w_i = min(ℓ̂_i, ℓ_i / cores) on average: T ≥ a + Σ_{S(a,b)} w_i + b. With
// a = b = 0 this is the class's work bound; with S = {i} it is r_i + w_i + q_i.
double HeadBodyTail(const ScheduleProblem& p, const std::vector<double>& head,
                    const std::vector<double>& tail, bool (ScheduleOp::*uses)() const,
                    int cores) {
  struct Item {
    double r, q, w;
  };
  std::vector<Item> items;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const ScheduleOp& op = p.ops[i];
    if (!(op.*uses)()) continue;
    items.push_back({head[i], tail[i], std::min(op.MinLatency(), op.single_core_s / cores)});
  }
  std::sort(items.begin(), items.end(), [](const Item& x, const Item& y) { return x.r > y.r; });
  double bound = 0;
  std::vector<Item> set;  // ops with r ≥ a, kept sorted by q descending
  for (std::size_t k = 0; k < items.size(); ++k) {
    const Item& it = items[k];
    set.insert(std::upper_bound(set.begin(), set.end(), it,
                                [](const Item& x, const Item& y) { return x.q > y.q; }),
               it);
    if (k + 1 < items.size() && items[k + 1].r == it.r) continue;  // a = it.r: take all equal
    double body = 0;
    for (const Item& s : set) {  // b = s.q: every op with q ≥ b, in decreasing q
      body += s.w;
      bound = std::max(bound, it.r + body + s.q);
    }
  }
  return bound;
}

}  // namespace

double MakespanLowerBound(const ScheduleProblem& p, const Precedence& prec) {
  auto min_latency = [](const ScheduleOp& op) { return op.MinLatency(); };
  const std::vector<double> bottom = BottomLevels(p, prec, min_latency);
  std::vector<double> head(p.ops.size(), 0), tail(p.ops.size(), 0);
  for (int i : prec.Order()) {
    for (int s : prec.Successors()[i]) {
      head[s] = std::max(head[s], head[i] + p.ops[i].MinLatency());
    }
  }
  double bound = 0;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    tail[i] = bottom[i] - p.ops[i].MinLatency();
    bound = std::max(bound, bottom[i]);  // the critical path
  }
  bound = std::max(bound, HeadBodyTail(p, head, tail, &ScheduleOp::UsesTensorCore, p.num_tc));
  bound = std::max(bound, HeadBodyTail(p, head, tail, &ScheduleOp::UsesVectorCore, p.num_vc));
  return bound;
}

}  // namespace phaze
