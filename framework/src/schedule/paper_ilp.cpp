#include "paper_ilp.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "phaze/core/error.hpp"
#include "phaze/schedule/list_schedule.hpp"

namespace phaze::paper_ilp {

namespace {

constexpr double kScaledSerialLength = 1000.0;  // the serial schedule's length in ILP units
constexpr double kRelativeTolerance = 1e-9;

// Source-to-sink paths of the DAG, or (more than `cap` of them) the longest path through each op.
std::vector<std::vector<int>> CutPaths(const ScheduleProblem& p, const Precedence& prec, int cap) {
  const int n = static_cast<int>(p.ops.size());
  std::vector<std::vector<int>> paths;
  std::vector<int> stack;
  bool overflow = false;
  std::function<void(int)> walk = [&](int v) {
    if (overflow) return;
    stack.push_back(v);
    if (prec.Successors()[v].empty()) {
      paths.push_back(stack);
      overflow = static_cast<int>(paths.size()) > cap;
    }
    for (int s : prec.Successors()[v]) walk(s);
    stack.pop_back();
  };
  for (int v = 0; v < n && !overflow; ++v) {
    if (prec.Predecessors()[v].empty()) walk(v);
  }
  if (!overflow) return paths;
  // Longest (by min latency) path through each op: top level back, bottom level forward.
  std::vector<double> top(n, 0), bottom(n, 0);
  for (int v : prec.Order()) {
    for (int q : prec.Predecessors()[v]) top[v] = std::max(top[v], top[q] + p.ops[q].MinLatency());
  }
  for (auto it = prec.Order().rbegin(); it != prec.Order().rend(); ++it) {
    double tail = 0;
    for (int s : prec.Successors()[*it]) tail = std::max(tail, bottom[s]);
    bottom[*it] = p.ops[*it].MinLatency() + tail;
  }
  std::set<std::vector<int>> unique;
  for (int v = 0; v < n; ++v) {
    std::vector<int> path{v};
    for (int u = v; !prec.Predecessors()[u].empty();) {
      int best = prec.Predecessors()[u][0];
      for (int q : prec.Predecessors()[u]) {
        if (top[q] + p.ops[q].MinLatency() > top[best] + p.ops[best].MinLatency()) best = q;
      }
      path.insert(path.begin(), best);
      u = best;
    }
    for (int u = v; !prec.Successors()[u].empty();) {
      int best = prec.Successors()[u][0];
      for (int s : prec.Successors()[u]) {
        if (bottom[s] > bottom[best]) best = s;
      }
      path.push_back(best);
      u = best;
    }
    unique.insert(path);
  }
  return {unique.begin(), unique.end()};
}

// Which core indices of one class each op may take in the z rows (empty: the op does not use the
// class). Without fused ops the cores are identical: min(C, |S|) of them matter, and with symmetry
// breaking the k-th op of the class (topological order) takes a core ≤ k. With fused ops, pairs
// and unpaired cores differ: pairs [0, min(P, ops using any core)), unpaired [P, P + min(C−P,
// |S|)).
std::vector<std::vector<int>> AllowedCores(const ScheduleProblem& p, const Precedence& prec,
                                           bool tensor, bool symmetry) {
  const int n = static_cast<int>(p.ops.size());
  const int cores = tensor ? p.num_tc : p.num_vc;
  const int paired = p.PairedCores();
  std::vector<int> members;
  int core_ops = 0;
  bool fused = false;
  for (int i : prec.Order()) {
    const auto& op = p.ops[i];
    core_ops += op.UsesCores();
    fused |= op.cls == ScheduleClass::kFused;
    if (tensor ? op.UsesTensorCore() : op.UsesVectorCore()) members.push_back(i);
  }
  const int size = static_cast<int>(members.size());
  std::vector<std::vector<int>> allowed(n);
  for (int k = 0; k < size; ++k) {
    auto& list = allowed[members[k]];
    if (!fused) {
      const int limit = std::min(cores, size);
      const int top = symmetry ? std::min(k + 1, limit) : limit;
      for (int c = 0; c < top; ++c) list.push_back(c);
      continue;
    }
    for (int c = 0; c < std::min(paired, core_ops); ++c) list.push_back(c);
    if (p.ops[members[k]].cls == ScheduleClass::kFused) continue;
    for (int c = paired; c < paired + std::min(cores - paired, size); ++c) list.push_back(c);
  }
  return allowed;
}

// Core labels of a heuristic schedule renamed to satisfy AllowedCores: by first use in
// topological order (pairs jointly for both classes when there are fused ops).
void Relabel(const ScheduleProblem& p, const Precedence& prec, ScheduleResult& s) {
  bool fused = false;
  for (const auto& op : p.ops) fused |= op.cls == ScheduleClass::kFused;
  const int paired = p.PairedCores();
  std::vector<int> tc_map(p.num_tc, -1), vc_map(p.num_vc, -1), pair_map(paired, -1);
  int next_tc = 0, next_vc = 0, next_pair = 0, next_utc = paired, next_uvc = paired;
  auto map = [&](int c, bool tensor) {
    if (fused && c < paired) {
      if (pair_map[c] < 0) pair_map[c] = next_pair++;
      return pair_map[c];
    }
    auto& m = tensor ? tc_map : vc_map;
    if (m[c] < 0)
      m[c] = fused ? (tensor ? next_utc++ : next_uvc++) : (tensor ? next_tc++ : next_vc++);
    return m[c];
  };
  for (int i : prec.Order()) {
    if (s.ops[i].intra_op) continue;
    for (int& c : s.ops[i].tensor_cores) c = map(c, true);
    for (int& c : s.ops[i].vector_cores) c = map(c, false);
  }
}

}  // namespace

bool Fixed(const ScheduleOp& op, bool presolve) {
  return !op.UsesCores() || (presolve && !op.IntraOpUseful());
}

IlpBuild BuildIlp(const ScheduleProblem& p, const Precedence& prec, const SchedulerOptions& o,
                  bool tensor_z, bool vector_z, const ScheduleResult* heuristic) {
  const int n = static_cast<int>(p.ops.size());
  IlpBuild b;
  const double serial = p.SerialMakespan();
  b.scale = serial > 0 ? kScaledSerialLength / serial : 1.0;
  const double s = b.scale;
  const bool use_heuristic = o.heuristic_start && heuristic != nullptr;
  // Big-M and T's upper bound: the heuristic makespan (an optimum is never longer), else the
  // serial length H of the paper.
  const double big_m = (use_heuristic ? heuristic->makespan_s * s : serial * s) * (1 + 1e-6) + 1e-9;
  IlpModel& m = b.model;
  m.SetName(p.name.empty() ? "schedule" : p.name);
  IlpIndex& ix = b.index;
  // (No lower bound on T: a bound a hair below what the work rows imply made CLP's presolve
  // declare a feasible model infeasible.)
  ix.makespan = m.AddVariable(0, big_m, VarType::kContinuous, "T", 1.0);
  ix.t.resize(n);
  ix.p.resize(n);
  ix.y.resize(n);
  // Scaled latencies ℓ_i, ℓ̂_i. Ones equal up to rounding are made equal: a y_i coefficient of
  // 1e-14 makes CLP declare feasible models infeasible.
  std::vector<double> single(n), all(n);
  for (int i = 0; i < n; ++i) {
    single[i] = p.ops[i].single_core_s * s;
    all[i] = p.ops[i].UsesCores() ? p.ops[i].all_cores_s * s : single[i];
    if (std::abs(single[i] - all[i]) <= 1e-9 * std::max(single[i], all[i])) all[i] = single[i];
  }
  for (int i = 0; i < n; ++i) {
    const auto& op = p.ops[i];
    const double l = single[i], lh = all[i];
    const std::string id = std::to_string(i);
    ix.t[i] = m.AddContinuous(0, big_m, "t" + id);
    ix.p[i] = m.AddContinuous(std::min(l, lh), std::max(l, lh), "p" + id);
    ix.y[i] = m.AddVariable(0, Fixed(op, o.presolve) ? 0 : 1, VarType::kBinary, "y" + id);
    // (3) T ≥ t_i + p_i;  (4) p_i = y_i·ℓ̂_i + (1 − y_i)·ℓ_i
    m.AddRow(0, {{ix.makespan, 1}, {ix.t[i], -1}, {ix.p[i], -1}}, kInfinity, "end" + id);
    m.AddRow(l, {{ix.p[i], 1}, {ix.y[i], l - lh}}, l, "dur" + id);
  }
  // (7–9) precedence: the direct edges imply the rows of the transitive closure.
  for (int i = 0; i < n; ++i) {
    for (int j : prec.Successors()[i]) {
      m.AddRow(-kInfinity, {{ix.t[i], 1}, {ix.p[i], 1}, {ix.t[j], -1}}, 0,
               "prec" + std::to_string(i) + "_" + std::to_string(j));
    }
  }
  // (5, 10, 11) incomparable pairs of core ops: order variables, big-M timing, intra-op
  // exclusivity.
  ix.x.assign(n, std::vector<int>(n, -1));
  auto core_pair = [&](int i, int j) {
    return i != j && p.ops[i].UsesCores() && p.ops[j].UsesCores() && !prec.Comparable(i, j);
  };
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (core_pair(i, j)) {
        ix.x[i][j] = m.AddBinary("x" + std::to_string(i) + "_" + std::to_string(j));
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (ix.x[i][j] < 0) continue;
      const std::string id = std::to_string(i) + "_" + std::to_string(j);
      m.AddRow(-kInfinity, {{ix.t[i], 1}, {ix.p[i], 1}, {ix.t[j], -1}, {ix.x[i][j], big_m}}, big_m,
               "order" + id);
      if (i < j) {
        m.AddRow(-kInfinity, {{ix.x[i][j], 1}, {ix.x[j][i], 1}}, 1, "anti" + id);
        if (!Fixed(p.ops[i], o.presolve)) {
          m.AddRow(0, {{ix.x[i][j], 1}, {ix.x[j][i], 1}, {ix.y[i], -1}}, kInfinity, "excl" + id);
        }
        if (!Fixed(p.ops[j], o.presolve)) {
          m.AddRow(0, {{ix.x[i][j], 1}, {ix.x[j][i], 1}, {ix.y[j], -1}}, kInfinity,
                   "excl" + std::to_string(j) + "_" + std::to_string(i));
        }
      }
    }
  }
  // (6) transitivity x_ik ≥ x_ij + x_jk − 1, only where some pair is incomparable and the row is
  // not trivially satisfied (comparable pairs have constant x).
  if (o.transitivity_rows) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        for (int k = 0; k < n; ++k) {
          if (i == j || j == k || i == k) continue;
          if (!p.ops[i].UsesCores() || !p.ops[j].UsesCores() || !p.ops[k].UsesCores()) continue;
          if (ix.x[i][j] < 0 && ix.x[j][k] < 0 && ix.x[i][k] < 0) continue;
          double rhs = -1;
          std::vector<std::pair<int, double>> terms;
          auto term = [&](int a, int c, double coef) {  // coef·x_ac, constant when comparable
            if (ix.x[a][c] >= 0) {
              terms.emplace_back(ix.x[a][c], coef);
            } else if (prec.Before(a, c)) {
              rhs -= coef;
            }
          };
          term(i, k, 1);
          term(i, j, -1);
          term(j, k, -1);
          if (terms.empty()) continue;
          std::vector<int> cols;
          std::vector<double> coefs;
          for (auto [c, v] : terms) {
            cols.push_back(c);
            coefs.push_back(v);
          }
          m.AddRow(rhs, cols, coefs, kInfinity,
                   "trans" + std::to_string(i) + "_" + std::to_string(j) + "_" + std::to_string(k));
        }
      }
    }
  }
  // Path cuts: the ops of a path never overlap each other, and an intra-op op j off the path holds
  // the chip, so it overlaps none of them — unless a link op of the path may run beside it.
  if (o.path_cuts) {
    int count = 0;
    for (const auto& path : CutPaths(p, prec, o.max_path_cuts)) {
      std::vector<char> on(n, 0);
      for (int v : path) on[v] = 1;
      std::vector<int> cols{ix.makespan};
      std::vector<double> coefs{1};
      for (int v : path) {
        cols.push_back(ix.p[v]);
        coefs.push_back(-1);
      }
      for (int j = 0; j < n; ++j) {
        if (on[j] || Fixed(p.ops[j], o.presolve)) continue;
        bool beside_link = false;
        for (int v : path) beside_link |= !p.ops[v].UsesCores() && !prec.Comparable(v, j);
        if (beside_link) continue;
        cols.push_back(ix.y[j]);
        coefs.push_back(-all[j]);
      }
      m.AddRow(0, cols, coefs, kInfinity, "path" + std::to_string(count++));
    }
  }
  // Work bounds per class: intra-op ops hold the chip one at a time; single-core ops of the class
  // share its cores in the remaining time.
  if (o.work_bounds) {
    for (bool tensor : {true, false}) {
      const int cores = tensor ? p.num_tc : p.num_vc;
      std::vector<int> cols{ix.makespan};
      std::vector<double> coefs{1};
      double rhs = 0;
      bool any = false;
      for (int i = 0; i < n; ++i) {
        const auto& op = p.ops[i];
        if (!op.UsesCores()) continue;
        const bool member = tensor ? op.UsesTensorCore() : op.UsesVectorCore();
        any |= member;
        const double share = member ? single[i] / cores : 0;
        rhs += share;
        if (!Fixed(op, o.presolve)) {
          cols.push_back(ix.y[i]);
          coefs.push_back(share - all[i]);
        }
      }
      if (any) m.AddRow(rhs, cols, coefs, kInfinity, tensor ? "work_tc" : "work_vc");
    }
  }
  // Lazy core-assignment rows (12–18) for the classes the replay found oversubscribed.
  ix.ztc.assign(n, {});
  ix.zvc.assign(n, {});
  for (bool tensor : {true, false}) {
    if (!(tensor ? tensor_z : vector_z)) continue;
    const auto allowed = AllowedCores(p, prec, tensor, o.symmetry_breaking);
    auto& z = tensor ? ix.ztc : ix.zvc;
    const std::string tag = tensor ? "ztc" : "zvc";
    for (int i = 0; i < n; ++i) {
      if (allowed[i].empty()) continue;
      std::vector<int> cols{ix.y[i]};
      std::vector<double> coefs{1};
      for (int c : allowed[i]) {
        z[i].emplace_back(c, m.AddBinary(tag + std::to_string(i) + "_" + std::to_string(c)));
        cols.push_back(z[i].back().second);
        coefs.push_back(1);
      }
      m.AddRow(1, cols, coefs, 1, tag + "one" + std::to_string(i));
    }
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        if (ix.x[i][j] < 0 || z[i].empty() || z[j].empty()) continue;
        for (auto [c, zi] : z[i]) {
          for (auto [d, zj] : z[j]) {
            if (c != d) continue;
            m.AddRow(
                -1, {{ix.x[i][j], 1}, {ix.x[j][i], 1}, {zi, -1}, {zj, -1}}, kInfinity,
                tag + "c" + std::to_string(i) + "_" + std::to_string(j) + "_" + std::to_string(c));
          }
        }
      }
    }
  }
  if (tensor_z && vector_z) {  // (17) a fused op's tensor and vector core are one pair
    for (int i = 0; i < n; ++i) {
      if (p.ops[i].cls != ScheduleClass::kFused) continue;
      for (std::size_t k = 0; k < ix.ztc[i].size(); ++k) {
        m.AddRow(0, {{ix.ztc[i][k].second, 1}, {ix.zvc[i][k].second, -1}}, 0,
                 "pair" + std::to_string(i) + "_" + std::to_string(ix.ztc[i][k].first));
      }
    }
  }
  if (use_heuristic) {
    ScheduleResult h = *heuristic;
    Relabel(p, prec, h);
    std::vector<double> v(m.NumVariables(), 0.0);
    v[ix.makespan] = h.makespan_s * s;
    const double tol = kRelativeTolerance * serial;
    for (int i = 0; i < n; ++i) {
      v[ix.t[i]] = h.ops[i].start_s * s;
      v[ix.p[i]] = h.ops[i].duration_s * s;
      v[ix.y[i]] = h.ops[i].intra_op ? 1 : 0;
      for (int j = 0; j < n; ++j) {
        if (ix.x[i][j] >= 0) v[ix.x[i][j]] = h.ops[i].Finish() <= h.ops[j].start_s + tol ? 1 : 0;
      }
      for (auto [c, var] : ix.ztc[i])
        v[var] = !h.ops[i].intra_op && h.ops[i].tensor_cores == std::vector<int>{c};
      for (auto [c, var] : ix.zvc[i])
        v[var] = !h.ops[i].intra_op && h.ops[i].vector_cores == std::vector<int>{c};
    }
    if (m.MaxViolation(v) <= 1e-6) b.start = std::move(v);
  }
  return b;
}

Replay ReplaySolution(const ScheduleProblem& p, const Precedence& prec, const IlpBuild& b,
                      const std::vector<double>& v, bool tensor_z, bool vector_z) {
  const int n = static_cast<int>(p.ops.size());
  const IlpIndex& ix = b.index;
  const double tol = kRelativeTolerance * p.SerialMakespan();
  Replay r;
  auto& ops = r.schedule.ops;
  ops.resize(n);
  std::vector<double> t(n);
  for (int i = 0; i < n; ++i) {
    t[i] = v[ix.t[i]] / b.scale;
    ops[i].intra_op = p.ops[i].UsesCores() && v[ix.y[i]] > 0.5;
    ops[i].duration_s = p.ops[i].Latency(ops[i].intra_op);
  }
  // A linear extension of the precedence that follows the ILP's start times (a solver stopped
  // at a limit may return times that break precedence; the order never does).
  std::vector<int> order;
  {
    std::vector<int> waiting(n);
    std::vector<char> ready(n, 0);
    for (int i = 0; i < n; ++i) {
      waiting[i] = static_cast<int>(prec.Predecessors()[i].size());
      ready[i] = waiting[i] == 0;
    }
    auto earlier = [&](int a, int c) {
      if (t[a] != t[c]) return t[a] < t[c];
      if (ops[a].duration_s != ops[c].duration_s) return ops[a].duration_s < ops[c].duration_s;
      return a < c;
    };
    for (int k = 0; k < n; ++k) {
      int next = -1;
      for (int i = 0; i < n; ++i) {
        if (ready[i] == 1 && (next < 0 || earlier(i, next))) next = i;
      }
      ready[next] = 2;
      order.push_back(next);
      for (int s : prec.Successors()[next]) {
        if (--waiting[s] == 0) ready[s] = 1;
      }
    }
  }
  for (int k = 0; k < n; ++k) {
    const int j = order[k];
    double start = 0;
    for (int q = 0; q < k; ++q) {
      const int i = order[q];
      const bool before = prec.Before(i, j) || (p.ops[i].UsesCores() && p.ops[j].UsesCores() &&
                                                t[i] + ops[i].duration_s <= t[j] + tol);
      if (before) start = std::max(start, ops[i].Finish());
    }
    ops[j].start_s = start;
    r.schedule.makespan_s = std::max(r.schedule.makespan_s, ops[j].Finish());
  }
  // Core assignment in order of start.
  std::sort(order.begin(), order.end(), [&](int a, int c) {
    return ops[a].start_s != ops[c].start_s ? ops[a].start_s < ops[c].start_s : a < c;
  });
  const int paired = p.PairedCores();
  std::vector<double> tc_busy(p.num_tc, -kInfinity), vc_busy(p.num_vc, -kInfinity);
  auto z_core = [&](const std::vector<std::pair<int, int>>& z) {
    for (auto [c, var] : z) {
      if (v[var] > 0.5) return c;
    }
    return -1;
  };
  for (int i : order) {
    const auto& op = p.ops[i];
    ScheduledOp& s = ops[i];
    if (!op.UsesCores()) continue;
    auto is_free = [&](const std::vector<double>& busy, int c) {
      return busy[c] <= s.start_s + tol;
    };
    if (s.intra_op) {
      for (bool tensor : {true, false}) {
        if (!(tensor ? op.UsesTensorCore() : op.UsesVectorCore())) continue;
        auto& busy = tensor ? tc_busy : vc_busy;
        auto& list = tensor ? s.tensor_cores : s.vector_cores;
        for (int c = 0; c < static_cast<int>(busy.size()); ++c) {
          if (!is_free(busy, c))
            (tensor ? r.tensor_oversubscribed : r.vector_oversubscribed) = true;
          busy[c] = s.Finish();
          list.push_back(c);
        }
      }
      continue;
    }
    if (op.cls == ScheduleClass::kFused) {
      int c = tensor_z ? z_core(ix.ztc[i]) : vector_z ? z_core(ix.zvc[i]) : -1;
      if (c < 0) {
        for (int d = 0; d < paired && c < 0; ++d) {
          if (is_free(tc_busy, d) && is_free(vc_busy, d)) c = d;
        }
      }
      if (c < 0) {
        bool tc_left = false, vc_left = false;
        for (int d = 0; d < p.num_tc; ++d) tc_left |= is_free(tc_busy, d);
        for (int d = 0; d < p.num_vc; ++d) vc_left |= is_free(vc_busy, d);
        r.tensor_oversubscribed |= !tc_left || tc_left == vc_left;
        r.vector_oversubscribed |= !vc_left || tc_left == vc_left;
        c = 0;
      }
      if (!is_free(tc_busy, c)) r.tensor_oversubscribed = true;
      if (!is_free(vc_busy, c)) r.vector_oversubscribed = true;
      tc_busy[c] = vc_busy[c] = s.Finish();
      s.tensor_cores = {c};
      s.vector_cores = {c};
      continue;
    }
    const bool tensor = op.cls == ScheduleClass::kTensor;
    auto& busy = tensor ? tc_busy : vc_busy;
    const auto& other = tensor ? vc_busy : tc_busy;
    int c = (tensor ? tensor_z : vector_z) ? z_core(tensor ? ix.ztc[i] : ix.zvc[i]) : -1;
    if (c < 0) {
      // Greedy: an unpaired free core, else the paired free core whose partner is busy longest.
      for (int d = 0; d < static_cast<int>(busy.size()); ++d) {
        if (!is_free(busy, d)) continue;
        if (c < 0 || (d >= paired && c < paired) ||
            (d < paired && c < paired && other[d] > other[c])) {
          c = d;
        }
      }
    }
    if (c < 0 || !is_free(busy, c)) {
      (tensor ? r.tensor_oversubscribed : r.vector_oversubscribed) = true;
      if (c < 0) c = 0;
    }
    busy[c] = s.Finish();
    (tensor ? s.tensor_cores : s.vector_cores) = {c};
  }
  return r;
}

}  // namespace phaze::paper_ilp
