#include "phaze/schedule/schedule_search.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <span>
#include <utility>

#include "phaze/schedule/list_schedule.hpp"

namespace phaze {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// The pools: tensor cores, vector cores, paired cores (for fused ops).
constexpr int kPools = 3;

// Each op's predecessors in one array: the bound runs over them at every node.
class Adjacency {
 public:
  explicit Adjacency(const std::vector<std::vector<int>>& lists) {
    start_.reserve(lists.size() + 1);
    start_.push_back(0);
    for (const auto& l : lists) {
      items_.insert(items_.end(), l.begin(), l.end());
      start_.push_back(static_cast<int>(items_.size()));
    }
  }
  std::span<const int> operator[](int i) const {
    return {items_.data() + start_[i], items_.data() + start_[i + 1]};
  }

 private:
  std::vector<int> start_, items_;
};

struct OpMode {
  double duration;
  std::array<int, kPools> use;
  bool intra;
};

class ScheduleSearch {
 public:
  ScheduleSearch(const ScheduleProblem& p, const Precedence& prec, const ModeRestriction& allowed,
                 double upper, double enough, long max_nodes)
      : p_(p),
        prec_(prec),
        preds_(prec.Predecessors()),
        n_(static_cast<int>(p.ops.size())),
        upper_(upper),
        threshold_(std::min(enough, upper)),
        max_nodes_(max_nodes),
        capacity_{p.num_tc, p.num_vc, p.PairedCores()} {
    modes_.resize(n_);
    min_duration_.resize(n_);
    tail_.assign(n_, 0);
    for (auto& e : energy_) e.assign(n_, 0);
    for (int i = 0; i < n_; ++i) {
      const ScheduleOp& op = p.ops[i];
      const bool fused = op.cls == ScheduleClass::kFused;
      const signed char a = allowed[i];
      if (a != 1 || !op.IntraOpUseful()) {
        modes_[i].push_back({op.single_core_s,
                             {op.UsesTensorCore() ? 1 : 0, op.UsesVectorCore() ? 1 : 0, fused ? 1 : 0},
                             false});
      }
      if (a != 0 && op.IntraOpUseful()) {
        modes_[i].push_back({op.all_cores_s, capacity_, true});
      }
      min_duration_[i] = kNever;
      for (int r = 0; r < 2; ++r) energy_[r][i] = kNever;
      for (const OpMode& m : modes_[i]) {
        min_duration_[i] = std::min(min_duration_[i], m.duration);
        // Time the op keeps the whole pool busy, on average: the least over its modes.
        for (int r = 0; r < 2; ++r) {
          energy_[r][i] = std::min(energy_[r][i], m.duration * m.use[r] / capacity_[r]);
        }
      }
    }
    // A sink's all-cores mode is only ever taken after every other op (see Dfs) — unless a link
    // op, which may run beside it, could. A sink that has no other mode is left out of the
    // bounds, which add its duration at the end instead.
    last_.assign(n_, 0);
    for (int i = 0; i < n_; ++i) {
      last_[i] = prec.Successors()[i].empty() && modes_[i].back().intra;
      for (int k = 0; k < n_ && last_[i]; ++k) {
        last_[i] = p.ops[k].UsesCores() || prec.Before(k, i);
      }
      if (!last_[i]) ++unplaced_before_sinks_;
      if (AlwaysLast(i)) {
        appended_ += modes_[i][0].duration;
        for (int r = 0; r < 2; ++r) energy_[r][i] = 0;
      }
    }
    for (int r = 0; r < 2; ++r) {
      for (int i = 0; i < n_; ++i) {
        if (energy_[r][i] > 0) needs_[r].push_back(i);
      }
    }
    for (int i : prec.Order()) {
      if (!AlwaysLast(i)) bounded_.push_back(i);
    }
    const auto& order = prec.Order();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      for (int s : prec.Successors()[*it]) {
        if (!AlwaysLast(s)) tail_[*it] = std::max(tail_[*it], tail_[s] + min_duration_[s]);
      }
    }
    placed_.assign(n_, 0);
    start_.assign(n_, 0);
    finish_.assign(n_, 0);
    mode_.assign(n_, 0);
    held_.assign(n_, {});
    usage_.resize(2 * n_ + 1);
    usage_stamp_.assign(2 * n_ + 1, -1);
    waiting_.resize(n_);
    for (int i = 0; i < n_; ++i) waiting_[i] = static_cast<int>(prec.Predecessors()[i].size());
    head_.resize(n_);
    children_.resize(n_);
  }

  ScheduleSearchResult Run() {
    ScheduleSearchResult result;
    result.complete = Dfs(-1, -1);
    result.lower_bound_s = std::min(floor_, shortest_);
    result.better = std::move(better_);
    result.nodes = nodes_;
    return result;
  }

 private:
  const OpMode& ModeOf(int i) const { return modes_[i][mode_[i]]; }
  bool AlwaysLast(int i) const { return last_[i] && modes_[i].size() == 1; }

  // Cores of each pool the placed ops hold at t.
  std::array<int, kPools> Usage(double t) const {
    std::array<int, kPools> used{};
    for (int k : order_) {
      if (start_[k] <= t && t < finish_[k]) {
        for (int r = 0; r < kPools; ++r) used[r] += held_[k][r];
      }
    }
    return used;
  }

  // An instant of the partial schedule: k < n is the start of placed op k, n + k its finish, 2n
  // time 0. Every time serial generation tries is one (a ready time is a predecessor's finish).
  double TimeOf(int at) const {
    return at < n_ ? start_[at] : at < 2 * n_ ? finish_[at - n_] : 0.0;
  }

  // Usage at an instant, memoised while the placed ops stay the same (a node's children).
  const std::array<int, kPools>& UsageAt(int at) {
    if (usage_stamp_[at] != generation_) {
      usage_stamp_[at] = generation_;
      usage_[at] = Usage(TimeOf(at));
    }
    return usage_[at];
  }

  // Whether m fits the pools over [t, t + duration): usage only rises where a placed op starts.
  bool Fits(const OpMode& m, int at) {
    if (!FreeAt(m, at)) return false;
    const double t = TimeOf(at);
    for (int k : order_) {
      if (start_[k] > t && start_[k] < t + m.duration && !FreeAt(m, k)) return false;
    }
    return true;
  }

  bool FreeAt(const OpMode& m, int at) {
    const std::array<int, kPools>& used = UsageAt(at);
    for (int r = 0; r < kPools; ++r) {
      if (m.use[r] > 0 && used[r] + m.use[r] > capacity_[r]) return false;
    }
    return true;
  }

  // The first of the (finish, instant) pairs, in increasing order of finish, that ends after t.
  static std::vector<std::pair<double, int>>::const_iterator FirstFinishAfter(
      const std::vector<std::pair<double, int>>& finishes, double t) {
    return std::upper_bound(finishes.begin(), finishes.end(), t,
                            [](double x, const auto& f) { return x < f.first; });
  }

  // Where serial generation would start op j in mode m after the ops placed, or kNever when that
  // is before the last op placed (start tau, index last): then another order makes the schedule.
  // `finishes`: the placed ops' finishes in increasing order with their instants (a start later
  // than ready is at one).
  double EarliestStart(int j, const OpMode& m, double tau, int last,
                       const std::vector<std::pair<double, int>>& finishes) {
    double ready = 0;
    int ready_at = 2 * n_;
    for (int q : preds_[j]) {
      if (finish_[q] > ready) {
        ready = finish_[q];
        ready_at = n_ + q;
      }
    }
    const std::span<const std::pair<double, int>> times(FirstFinishAfter(finishes, ready),
                                                        finishes.end());
    const bool idle = m.use[0] + m.use[1] == 0;
    // Before tau a placed op may still start inside the op's span: the full check.
    if (ready < tau && (idle || Fits(m, ready_at))) return kNever;
    for (const auto& [t, at] : times) {
      if (t >= tau) break;
      if (Fits(m, at)) return kNever;
    }
    // From tau on, no placed op starts any more: usage only falls, so the start alone decides.
    const double from = std::max(ready, tau);
    const int from_at = ready >= tau ? ready_at : last;  // tau > ready: tau is last's start
    if (idle || FreeAt(m, from_at)) return from == tau && j < last ? kNever : from;
    for (const auto& [t, at] : times) {
      if (t > from && FreeAt(m, at)) return t;
    }
    return kNever;  // not reached: once every placed op has finished, anything fits
  }

  // A bound on every completion of the current partial schedule, whose last start is tau (no op
  // still to place starts earlier).
  double Bound(double tau) {
    double bound = times_.empty() ? 0.0 : times_.back().first;  // the last finish
    for (int i : bounded_) {  // longest paths at the smallest durations
      if (placed_[i]) continue;
      double head = tau;
      for (int q : preds_[i]) {
        head = std::max(head, placed_[q] ? finish_[q] : head_[q] + min_duration_[q]);
      }
      head_[i] = head;
      bound = std::max(bound, head + min_duration_[i] + tail_[i]);
    }
    // Per pool: the remaining work packed into what the placed ops leave free after tau (their
    // use only falls from there), then the smallest tail of an op that needs it. The placed ops
    // that end after tau, in order of their ends, are a suffix of times_ (ops ending together
    // may come in any order: after the first, each frees its cores over no time).
    const auto after = FirstFinishAfter(times_, tau);
    for (int r = 0; r < 2; ++r) {
      double work = 0, tail = kNever;
      for (int i : needs_[r]) {
        if (placed_[i]) continue;
        work += energy_[r][i];
        tail = std::min(tail, tail_[i]);
      }
      if (work <= 0) continue;
      int used = 0;
      for (auto it = after; it != times_.end(); ++it) used += held_[it->second - n_][r];
      double t = tau;
      for (auto it = after; it != times_.end(); ++it) {
        const int u = held_[it->second - n_][r];
        if (u == 0) continue;
        const double end = it->first;
        const double room = (1.0 - static_cast<double>(used) / capacity_[r]) * (end - t);
        if (room >= work) break;
        work -= room;
        t = end;
        used -= u;
      }
      const double free = 1.0 - static_cast<double>(used) / capacity_[r];
      bound = std::max(bound, t + work / free + tail);  // free > 0: some op of the pool ended
    }
    return bound + appended_;
  }

  // Every op placed, but sinks that then take all cores one after another: the relaxation's
  // schedule, replayed on real cores.
  void Complete() {
    double makespan = 0;
    for (int k : order_) makespan = std::max(makespan, finish_[k]);
    std::vector<int> order = order_;
    std::vector<ModeChoice> choices(n_);
    for (int i = 0; i < n_; ++i) {
      if (placed_[i]) {
        choices[i] = ModeOf(i).intra ? ModeChoice::kIntra : ModeChoice::kSingle;
      } else {  // a sink left: all cores, after the others
        choices[i] = ModeChoice::kIntra;
        makespan += modes_[i].back().duration;
        order.push_back(i);
      }
    }
    shortest_ = std::min(shortest_, makespan);
    ScheduleResult real = GenerateSchedule(p_, prec_, order, choices, /*backfill=*/true);
    if (real.makespan_s < upper_) {
      upper_ = real.makespan_s;
      better_ = std::move(real);
    }
    threshold_ = std::min(threshold_, makespan);
  }

  // False when the node budget ran out.
  bool Dfs(double tau, int last) {
    if (static_cast<int>(order_.size()) == n_) {
      Complete();
      return true;
    }
    if (++nodes_ > max_nodes_) return false;
    // A sink on all cores can go last: take it out, close the gap it leaves by moving every op
    // after it earlier by its duration, and put it at the end — the makespan does not grow. So
    // sinks only take all cores once every other op is placed, one after another.
    if (unplaced_before_sinks_ == 0) Complete();
    // This depth's children, in a buffer kept from node to node (a search visits up to
    // solver.search_nodes of them).
    std::vector<Child>& children = children_[order_.size()];
    children.clear();
    ++generation_;  // the placed ops are this node's until its children are generated
    for (int j = 0; j < n_; ++j) {
      if (placed_[j] || waiting_[j] > 0) continue;
      for (int m = 0; m < static_cast<int>(modes_[j].size()); ++m) {
        if (last_[j] && modes_[j][m].intra) continue;
        const double t = EarliestStart(j, modes_[j][m], tau, last, times_);
        if (t == kNever) continue;  // another order makes this schedule
        children.push_back({j, m, t, modes_[j][m].duration + tail_[j]});
      }
    }
    std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) {
      return a.start != b.start ? a.start < b.start : a.priority > b.priority;
    });
    for (const Child& c : children) {
      placed_[c.op] = 1;
      mode_[c.op] = c.mode;
      held_[c.op] = modes_[c.op][c.mode].use;
      start_[c.op] = c.start;
      finish_[c.op] = c.start + modes_[c.op][c.mode].duration;
      order_.push_back(c.op);
      if (!last_[c.op]) --unplaced_before_sinks_;
      const std::pair<double, int> time{finish_[c.op], n_ + c.op};
      // By position: the subtree inserts and erases its own, so this one is where it was put.
      const auto at = std::upper_bound(times_.begin(), times_.end(), time) - times_.begin();
      times_.insert(times_.begin() + at, time);
      for (int s : prec_.Successors()[c.op]) --waiting_[s];
      const double bound = Bound(c.start);
      bool within_budget = true;
      if (bound >= threshold_) {
        floor_ = std::min(floor_, bound);
      } else {
        within_budget = Dfs(c.start, c.op);
      }
      for (int s : prec_.Successors()[c.op]) ++waiting_[s];
      times_.erase(times_.begin() + at);
      if (!last_[c.op]) ++unplaced_before_sinks_;
      order_.pop_back();
      placed_[c.op] = 0;
      if (!within_budget) return false;
    }
    return true;
  }

  struct Child {
    int op, mode;
    double start, priority;
  };

  const ScheduleProblem& p_;
  const Precedence& prec_;
  const Adjacency preds_;
  const int n_;
  double upper_, threshold_;
  const long max_nodes_;
  const std::array<int, kPools> capacity_;
  std::vector<std::vector<OpMode>> modes_;
  std::vector<double> min_duration_, tail_;
  std::vector<char> last_;  // a sink that may take all cores: it does so after every other op
  double appended_ = 0;     // the all-cores time of the sinks with no other mode
  std::array<std::vector<double>, 2> energy_;
  std::array<std::vector<int>, 2> needs_;  // per pool, the ops with energy in it, in index order
  std::vector<int> bounded_;  // the ops Bound's paths run through, in precedence order
  // The partial schedule.
  std::vector<char> placed_;
  std::vector<double> start_, finish_, head_;
  std::vector<int> mode_, waiting_, order_;
  std::vector<std::array<int, kPools>> held_;  // a placed op's cores per pool (its mode's use)
  // The placed ops' finishes and instants, sorted: kept as ops are placed and taken back.
  std::vector<std::pair<double, int>> times_;
  int unplaced_before_sinks_ = 0;  // ops not placed that are not sinks deferred to the end
  std::vector<std::array<int, kPools>> usage_;  // UsageAt's, per instant
  std::vector<long> usage_stamp_;               // the generation each usage_ entry is from
  long generation_ = 0;
  std::vector<std::vector<Child>> children_;  // Dfs's, per depth (ops placed)
  double floor_ = kNever;     // the least bound of a pruned node
  double shortest_ = kNever;  // the shortest complete schedule of the relaxation
  std::optional<ScheduleResult> better_;
  long nodes_ = 0;
};

}  // namespace

ScheduleSearchResult SearchSchedules(const ScheduleProblem& problem, const Precedence& precedence,
                                     const ModeRestriction& modes, double upper, double enough,
                                     long max_nodes) {
  return ScheduleSearch(problem, precedence, modes, upper, enough, max_nodes).Run();
}

}  // namespace phaze
