#include "phaze/schedule/list_schedule.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <queue>
#include <random>
#include <utility>

#include "phaze/schedule/schedule_search.hpp"

namespace phaze {

std::vector<int> AllCores(int count) {
  std::vector<int> v(count);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

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

ModeChoice Flipped(ModeChoice mode) {
  return mode == ModeChoice::kIntra ? ModeChoice::kSingle : ModeChoice::kIntra;
}

struct Busy {
  double start, finish;
};

// The busy intervals of one resource (a core, the chip for intra-op ops, or every core op) in
// increasing (start, finish), and their last finish.
struct Timeline {
  std::vector<Busy> busy;
  double last = 0;

  void Add(double start, double finish) {
    const Busy b{start, finish};
    busy.insert(std::upper_bound(busy.begin(), busy.end(), b,
                                 [](const Busy& x, const Busy& y) {
                                   return x.start < y.start ||
                                          (x.start == y.start && x.finish < y.finish);
                                 }),
                b);
    last = std::max(last, finish);
  }
  void Clear() {  // keeps the capacity
    busy.clear();
    last = 0;
  }
};

// The earliest start ≥ ready at which [start, start + duration) is free on every timeline: with
// back-filling the first gap long enough, else after the last interval of each.
double EarliestFit(double ready, double duration, std::initializer_list<const Timeline*> lines,
                   bool backfill) {
  double start = ready;
  if (!backfill) {
    for (const Timeline* l : lines) start = std::max(start, l->last);
    return start;
  }
  // An interval that [start, start + duration) overlaps moves the start to its end: no start
  // before that is free either, so the answer is the least free start ≥ ready, whatever the order
  // of the jumps. The start only grows, so in (start, finish) order an interval that ends by the
  // start never overlaps again, and the first that begins at or after start + duration ends the
  // line's scan for now: each line is scanned once, resuming where it stopped, until a round
  // moves nothing.
  std::array<std::size_t, 3> next{};  // per line: its first interval not passed yet
  assert(lines.size() <= next.size() && "EarliestFit scans at most 3 timelines; grow `next`");
  for (bool moved = true; moved;) {
    moved = false;
    std::size_t k = 0;
    for (const Timeline* l : lines) {
      std::size_t& i = next[k++];
      for (; i < l->busy.size(); ++i) {
        const Busy& b = l->busy[i];
        if (b.start >= start + duration) break;
        if (start < b.finish) {
          start = b.finish;
          moved = true;
        }
      }
    }
  }
  return start;
}

}  // namespace

namespace {

// The buffers of serial generations, reused from one to the next (the local search runs tens of
// thousands): per op its start, finish and core (−1: intra-op, −2: a link op), the cores'
// timelines. Generate fills it without allocating once the buffers have grown.
struct Generation {
  std::vector<Timeline> tc, vc;
  Timeline intra_ops;  // intra-op ops: no core op may overlap them
  Timeline core_ops;   // every core op: an intra-op op may overlap none
  std::vector<double> start, finish;
  std::vector<int> core;
  double makespan = 0;
};

void Generate(const ScheduleProblem& p, const Precedence& prec, const std::vector<int>& order,
              const std::vector<ModeChoice>& modes, bool backfill, Generation& g) {
  const int paired = p.PairedCores();
  // No schedule of n ops needs more than n cores of a class; the others stay idle.
  const int n = static_cast<int>(p.ops.size());
  g.tc.resize(static_cast<std::size_t>(std::min(p.num_tc, n)));
  g.vc.resize(static_cast<std::size_t>(std::min(p.num_vc, n)));
  for (auto* line : {&g.tc, &g.vc}) {
    for (Timeline& t : *line) t.Clear();
  }
  g.intra_ops.Clear();
  g.core_ops.Clear();
  g.start.assign(static_cast<std::size_t>(n), 0.0);
  g.finish.assign(static_cast<std::size_t>(n), 0.0);
  g.core.assign(static_cast<std::size_t>(n), -2);
  g.makespan = 0;
  auto& tc = g.tc;
  auto& vc = g.vc;
  for (int i : order) {
    const ScheduleOp& op = p.ops[i];
    double ready = 0;
    for (int q : prec.Predecessors()[i]) ready = std::max(ready, g.finish[q]);
    if (!op.UsesCores()) {
      g.start[i] = ready;
      g.finish[i] = ready + op.single_core_s;
      g.makespan = std::max(g.makespan, g.finish[i]);
      continue;
    }
    // Single-core candidate: the core (pair) giving the earliest start — not needed when the op
    // must run on all cores, as the all-cores start is not when it must run on one.
    const ModeChoice mode = modes[i];
    int best = -1;
    double best_start = 0;
    auto consider = [&](int c, double start, bool better_tie) {
      if (best < 0 || start < best_start || (start == best_start && better_tie)) {
        best = c;
        best_start = start;
      }
    };
    const double d = op.single_core_s;
    if (mode != ModeChoice::kIntra) {
      if (op.cls == ScheduleClass::kFused) {
        bool tried_idle = false;  // idle pairs are all alike
        for (int c = 0; c < std::min<int>(paired, tc.size()); ++c) {
          const bool idle = tc[c].busy.empty() && vc[c].busy.empty();
          if (idle && std::exchange(tried_idle, true)) continue;
          consider(c, EarliestFit(ready, d, {&g.intra_ops, &tc[c], &vc[c]}, backfill), false);
        }
      } else {
        const bool tensor = op.cls == ScheduleClass::kTensor;
        const auto& mine = tensor ? tc : vc;
        const auto& other = tensor ? vc : tc;
        bool tried_idle_pair = false, tried_idle_unpaired = false;  // idle ones are all alike
        for (int c = 0; c < static_cast<int>(mine.size()); ++c) {
          if (mine[c].busy.empty()) {
            const bool pair_idle = c < static_cast<int>(other.size()) && other[c].busy.empty();
            if (c >= paired && std::exchange(tried_idle_unpaired, true)) continue;
            if (c < paired && pair_idle && std::exchange(tried_idle_pair, true)) continue;
          }
          const double start = EarliestFit(ready, d, {&g.intra_ops, &mine[c]}, backfill);
          // Tie-break: keep whole pairs free for fused ops.
          const bool unpaired = c >= paired;
          const bool best_unpaired = best >= paired;
          bool better = false;
          if (best >= 0 && start == best_start) {
            if (unpaired != best_unpaired) {
              better = unpaired;
            } else if (!unpaired && c < static_cast<int>(other.size())) {
              better = best >= static_cast<int>(other.size()) || other[c].last > other[best].last;
            }
          }
          consider(c, start, better);
        }
      }
    }
    const double intra_start = mode == ModeChoice::kSingle
                                   ? 0
                                   : EarliestFit(ready, op.all_cores_s, {&g.core_ops}, backfill);
    bool intra = false;
    if (mode == ModeChoice::kIntra) {
      intra = true;
    } else if (mode == ModeChoice::kEarliestFinish) {
      intra = intra_start + op.all_cores_s < best_start + op.single_core_s;
    }
    if (intra) {
      g.core[i] = -1;
      g.start[i] = intra_start;
      g.finish[i] = intra_start + op.all_cores_s;
      g.intra_ops.Add(g.start[i], g.finish[i]);
    } else {
      g.core[i] = best;
      g.start[i] = best_start;
      g.finish[i] = best_start + op.single_core_s;
      if (op.UsesTensorCore()) tc[best].Add(g.start[i], g.finish[i]);
      if (op.UsesVectorCore()) vc[best].Add(g.start[i], g.finish[i]);
    }
    g.core_ops.Add(g.start[i], g.finish[i]);
    g.makespan = std::max(g.makespan, g.finish[i]);
  }
}

// The schedule a generation found.
ScheduleResult Materialize(const ScheduleProblem& p, const Generation& g) {
  ScheduleResult r;
  r.ops.resize(p.ops.size());
  r.stats.path = SchedulePath::kListSchedule;
  r.makespan_s = g.makespan;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const ScheduleOp& op = p.ops[i];
    ScheduledOp& s = r.ops[i];
    s.start_s = g.start[i];
    s.duration_s = g.finish[i] - g.start[i];
    if (!op.UsesCores()) {
      s.duration_s = op.single_core_s;
      continue;
    }
    if (g.core[i] == -1) {
      s.intra_op = true;
      s.duration_s = op.all_cores_s;
      if (op.UsesTensorCore()) s.tensor_cores = AllCores(p.num_tc);
      if (op.UsesVectorCore()) s.vector_cores = AllCores(p.num_vc);
    } else {
      s.duration_s = op.single_core_s;
      if (op.UsesTensorCore()) s.tensor_cores = {g.core[i]};
      if (op.UsesVectorCore()) s.vector_cores = {g.core[i]};
    }
  }
  return r;
}

}  // namespace

ScheduleResult GenerateSchedule(const ScheduleProblem& p, const Precedence& prec,
                                const std::vector<int>& order,
                                const std::vector<ModeChoice>& modes, bool backfill) {
  Generation g;
  Generate(p, prec, order, modes, backfill, g);
  return Materialize(p, g);
}

ScheduleResult HeuristicSchedule(const ScheduleProblem& p, const Precedence& prec, bool thorough) {
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
  bool best_backfill = false;
  for (const auto& order : orders) {
    for (const auto& modes : mode_sets) {
      for (bool backfill : {false, true}) {
        if (backfill && !thorough) continue;  // back-filling scans every interval of a core
        ScheduleResult r = GenerateSchedule(p, prec, order, modes, backfill);
        if (!have || r.makespan_s < best.makespan_s) {
          best = std::move(r);
          best_order = &order;
          best_backfill = backfill;
          have = true;
        }
      }
    }
  }
  if (!have) return GenerateSchedule(p, prec, prec.Order(), std::vector<ModeChoice>(n), false);
  // Local search: flip one op's mode at a time (the others keep theirs) while it helps.
  std::vector<ModeChoice> modes(n);
  for (int i = 0; i < n; ++i)
    modes[i] = best.ops[i].intra_op ? ModeChoice::kIntra : ModeChoice::kSingle;
  for (int pass = 0; pass < (thorough ? 3 : 0); ++pass) {
    bool improved = false;
    for (int i = 0; i < n; ++i) {
      if (!p.ops[i].IntraOpUseful()) continue;
      modes[i] = Flipped(modes[i]);
      ScheduleResult r = GenerateSchedule(p, prec, *best_order, modes, best_backfill);
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
                               const ScheduleResult& start, int evaluations, double good_enough,
                               unsigned seed, const Deadline& deadline, bool* stopped) {
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
  ScheduleResult best = GenerateSchedule(p, prec, order, modes, /*backfill=*/true);
  if (start.makespan_s < best.makespan_s) best = start;
  double current = best.makespan_s;
  std::vector<int> flippable;
  for (int i = 0; i < n; ++i) {
    if (p.ops[i].IntraOpUseful()) flippable.push_back(i);
  }
  std::mt19937 rng(12345u + static_cast<unsigned>(n) + 7919u * seed);
  const double start_theta = 0.02 * best.makespan_s;
  std::vector<int> position(n);
  // Trials reuse these buffers: the loop allocates nothing once they have grown.
  std::vector<int> trial_order;
  std::vector<ModeChoice> trial_modes;
  Generation trial;
  for (int e = 0; e < evaluations && best.makespan_s > good_enough; ++e) {
    if (e % 16 == 0 && deadline.Passed()) {
      if (stopped) *stopped = true;
      break;
    }
    // Moves: flip one op's mode, flip two (two single-core ops side by side can beat both
    // intra-op when neither alone does), move one op, or move one and flip it.
    const unsigned kind = flippable.empty() ? 2 : rng() % 4;
    trial_order.assign(order.begin(), order.end());
    trial_modes.assign(modes.begin(), modes.end());
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
    Generate(p, prec, trial_order, trial_modes, /*backfill=*/true, trial);
    // Simulated annealing: worse moves pass with probability exp(−Δ/θ), θ cooling from 2% of
    // the start makespan to 0.01% — several single-core ops side by side beat intra-op only
    // together, so the way there goes uphill.
    const double theta = start_theta * std::pow(1e-2 / 2, static_cast<double>(e) / evaluations);
    const double delta = trial.makespan - current;
    if (delta <= 0 || std::generate_canonical<double, 32>(rng) < std::exp(-delta / theta)) {
      current = trial.makespan;
      std::swap(order, trial_order);
      std::swap(modes, trial_modes);
      if (trial.makespan < best.makespan_s) best = Materialize(p, trial);
    }
  }
  return best;
}

namespace {

// One op as seen by one core class: head r (earliest start), tail q (time it must leave after
// its end), duration d and the share of the class's cores it holds while running.
struct Load {
  double r, q, d, share;
  double Work() const { return d * share; }  // time it keeps the class's cores busy, on average
};

// Head-body-tail bound. Every op i starts no earlier than r_i and ends no later than T − q_i. So
// for a ≤ r_i and b ≤ q_i, the ops of S(a, b) = {i : r_i ≥ a, q_i ≥ b} all run inside
// [a, T − b]: T ≥ a + Σ_{S(a,b)} w_i + b. With a = b = 0 this is the class's work bound; with
// S = {i} it is r_i + d_i·share_i + q_i.
double HeadBodyTail(std::vector<Load> items) {
  std::sort(items.begin(), items.end(), [](const Load& x, const Load& y) { return x.r > y.r; });
  double bound = 0;
  std::vector<Load> set;  // ops with r ≥ a, kept sorted by q descending
  for (std::size_t k = 0; k < items.size(); ++k) {
    const Load& it = items[k];
    set.insert(std::upper_bound(set.begin(), set.end(), it,
                                [](const Load& x, const Load& y) { return x.q > y.q; }),
               it);
    if (k + 1 < items.size() && items[k + 1].r == it.r) continue;  // a = it.r: take all equal
    double body = 0;
    for (const Load& s : set) {  // b = s.q: every op with q ≥ b, in decreasing q
      body += s.Work();
      bound = std::max(bound, it.r + body + s.q);
    }
  }
  return bound;
}

// Energetic reasoning (Baptiste, Le Pape and Nuijten): with makespan T, op i runs inside
// [r_i, T − q_i], so in an interval [t1, t2] it runs for at least the smaller of its overlaps
// when started first thing and when ended last thing. True when some interval needs more core
// time than the class has there: then no schedule of length T exists.
bool Overloaded(const std::vector<Load>& items, double T) {
  std::vector<double> from, to;
  for (const Load& it : items) {
    const double deadline = T - it.q;
    from.insert(from.end(), {it.r, it.r + it.d, deadline - it.d});
    to.insert(to.end(), {deadline, deadline - it.d, it.r + it.d});
  }
  std::sort(from.begin(), from.end());
  from.erase(std::unique(from.begin(), from.end()), from.end());
  std::sort(to.begin(), to.end());
  to.erase(std::unique(to.begin(), to.end()), to.end());
  for (double t1 : from) {
    for (auto t2 = std::upper_bound(to.begin(), to.end(), t1); t2 != to.end(); ++t2) {
      const double length = *t2 - t1;
      double energy = 0;
      for (const Load& it : items) {
        const double deadline = T - it.q;
        const double left = std::min(it.r + it.d, *t2) - std::max(it.r, t1);
        const double right = std::min(deadline, *t2) - std::max(deadline - it.d, t1);
        energy += it.share * std::max(0.0, std::min({it.d, length, left, right}));
      }
      if (energy > length * (1 + 1e-9)) return true;
    }
  }
  return false;
}

enum Mode : signed char { kOpen = -1, kOneCore = 0, kAllCores = 1 };

// The ops under a choice of modes (kOpen: either): durations (an open op the smaller), heads and
// tails (longest paths at those durations) and, per class, the loads — a one-core op of the class
// holds 1/cores of it, an all-cores op of any class all of it (it holds the whole chip), an open
// op of the class min(ℓ̂_i, ℓ_i / cores) on average over its shorter duration. Every figure is at
// most its value under any choice of the open modes, so bounds from them hold for all of them.
struct ModeView {
  double critical_path = 0;
  double chip_path = 0;  // a path plus the all-cores ops off it
  std::vector<Load> tensor, vector;

  ModeView(const ScheduleProblem& p, const Precedence& prec, const std::vector<Mode>& mode) {
    const std::size_t n = p.ops.size();
    std::vector<double> d(n), head(n, 0), tail(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const ScheduleOp& op = p.ops[i];
      d[i] = mode[i] == kOpen ? op.MinLatency() : op.Latency(mode[i] == kAllCores);
    }
    // No two ops of a path overlap, nor an all-cores op any other core op: every all-cores op
    // plus the longest path through the other core ops (link ops, which may overlap an all-cores
    // op, and all-cores ops weigh nothing on it) is a bound too.
    double all_cores = 0;
    std::vector<double> reach(n, 0);  // that path's longest prefix ending at i
    const auto& order = prec.Order();
    for (int i : order) {
      const bool alone = mode[i] == kAllCores;
      if (alone) all_cores += d[i];
      reach[i] += alone || !p.ops[i].UsesCores() ? 0 : d[i];
      chip_path = std::max(chip_path, reach[i]);
      for (int s : prec.Successors()[i]) {
        head[s] = std::max(head[s], head[i] + d[i]);
        reach[s] = std::max(reach[s], reach[i]);
      }
    }
    chip_path += all_cores;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      for (int s : prec.Successors()[*it]) tail[*it] = std::max(tail[*it], tail[s] + d[s]);
      critical_path = std::max(critical_path, head[*it] + d[*it] + tail[*it]);
    }
    for (bool is_tensor : {true, false}) {
      const int cores = is_tensor ? p.num_tc : p.num_vc;
      auto& loads = is_tensor ? tensor : vector;
      loads.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        const ScheduleOp& op = p.ops[i];
        if (!op.UsesCores()) continue;
        const bool mine = is_tensor ? op.UsesTensorCore() : op.UsesVectorCore();
        double share = 0;
        if (mode[i] == kAllCores) {
          share = 1;
        } else if (mine) {
          share = 1.0 / cores;
          if (mode[i] == kOpen) share = std::min(share * op.single_core_s, d[i]) / d[i];
        }
        if (share > 0 && d[i] > 0) loads.push_back({head[i], tail[i], d[i], share});
      }
    }
  }

  double Bound() const {
    return std::max({critical_path, chip_path, HeadBodyTail(tensor), HeadBodyTail(vector)});
  }

  // The smallest T in [lo, hi] energetic reasoning cannot rule out (to 1e-4 relative, far below
  // the gaps asked for), given that none below lo exists; hi when even hi is ruled out.
  double Energetic(double lo, double hi) const {
    auto overloaded = [&](double T) { return Overloaded(tensor, T) || Overloaded(vector, T); };
    if (!overloaded(lo)) return lo;
    if (overloaded(hi)) return hi;
    while (hi - lo > 1e-4 * hi) {
      const double mid = (lo + hi) / 2;
      (overloaded(mid) ? lo : hi) = mid;
    }
    return lo;
  }
};

}  // namespace

double MakespanLowerBound(const ScheduleProblem& p, const Precedence& prec,
                          const LowerBoundOptions& options, ScheduleResult* better) {
  const std::size_t n = p.ops.size();
  // Ops whose mode is open: the ones intra-op parallelism can help, the ones blocking the chip
  // longest or gaining most from it decided first.
  std::vector<int> open;
  for (std::size_t i = 0; i < n; ++i) {
    if (p.ops[i].IntraOpUseful()) open.push_back(static_cast<int>(i));
  }
  auto weight = [&](int i) {
    return std::max(p.ops[i].all_cores_s, p.ops[i].single_core_s - p.ops[i].all_cores_s);
  };
  std::stable_sort(open.begin(), open.end(), [&](int a, int b) { return weight(a) > weight(b); });
  std::vector<Mode> modes(n, kOneCore);
  for (int i : open) modes[i] = kOpen;
  // Best-first branch and bound over the open modes: the smallest bound among the nodes not yet
  // branched on is a lower bound on every schedule. A node whose modes are all decided is
  // strengthened once (energetic reasoning, at most 16 times in all; then the schedule search
  // while its budget lasts) and goes back into the queue. It stops at a strengthened node, at
  // `upper`, after `max_nodes` branchings or when nothing is left to strengthen with.
  struct Node {
    double bound;
    std::size_t depth;  // open[0, depth) decided
    std::vector<Mode> mode;
    bool strengthened;
    bool operator<(const Node& o) const { return bound > o.bound; }  // min-heap
  };
  double upper = options.upper;
  const double ceiling = std::isfinite(upper) ? upper : p.SerialMakespan();
  int energetic = 16;  // energetic reasoning is costly: at most this many times
  long search_nodes = options.search_nodes;
  std::priority_queue<Node> queue;
  queue.push({ModeView(p, prec, modes).Bound(), 0, std::move(modes), false});
  for (int nodes = 0;; ++nodes) {
    Node node = queue.top();
    if (node.bound >= upper || nodes >= options.max_nodes || node.strengthened) return node.bound;
    queue.pop();
    if (node.depth == open.size()) {
      if (energetic == 0 && search_nodes <= 0) return node.bound;
      if (energetic > 0) {
        --energetic;
        node.bound = ModeView(p, prec, node.mode).Energetic(node.bound, std::max(node.bound, ceiling));
      }
      if (search_nodes > 0 && node.bound < options.enough) {
        const ScheduleSearchResult s =
            SearchSchedules(p, prec, ModeRestriction(node.mode.begin(), node.mode.end()), upper,
                            options.enough, search_nodes);
        search_nodes -= s.nodes;
        if (s.complete) node.bound = std::max(node.bound, s.lower_bound_s);
        if (s.better) {
          upper = s.better->makespan_s;
          if (better) *better = *s.better;
        }
      }
      node.strengthened = true;
      queue.push(std::move(node));
      continue;
    }
    for (Mode m : {kOneCore, kAllCores}) {
      node.mode[open[node.depth]] = m;
      queue.push({ModeView(p, prec, node.mode).Bound(), node.depth + 1, node.mode, false});
    }
  }
}

}  // namespace phaze
