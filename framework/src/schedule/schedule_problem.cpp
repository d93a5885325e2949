#include "phaze/schedule/schedule_problem.hpp"

#include <algorithm>
#include <cmath>

namespace phaze {

std::string_view ToString(ScheduleClass cls) {
  switch (cls) {
    case ScheduleClass::kTensor:
      return "tensor";
    case ScheduleClass::kVector:
      return "vector";
    case ScheduleClass::kFused:
      return "fused";
    case ScheduleClass::kLink:
      return "link";
  }
  return "?";
}

std::string_view ToString(SchedulePath path) {
  switch (path) {
    case SchedulePath::kEmpty:
      return "empty";
    case SchedulePath::kChain:
      return "chain";
    case SchedulePath::kListSchedule:
      return "list-schedule";
    case SchedulePath::kSearch:
      return "search";
    case SchedulePath::kIlp:
      return "ilp";
  }
  return "?";
}

std::optional<ScheduleClass> ParseScheduleClass(std::string_view text) {
  for (auto cls : {ScheduleClass::kTensor, ScheduleClass::kVector, ScheduleClass::kFused,
                   ScheduleClass::kLink}) {
    if (ToString(cls) == text) return cls;
  }
  return std::nullopt;
}

std::string ScheduleProblem::Validate() const {
  if (num_tc < 0 || num_vc < 0) return "core counts must be ≥ 0";
  const int n = static_cast<int>(ops.size());
  for (const auto& op : ops) {
    const std::string where = "op '" + op.name + "'";
    if (!std::isfinite(op.single_core_s) || op.single_core_s < 0) {
      return where + ": single-core latency must be finite and ≥ 0";
    }
    if (op.UsesCores() && (!std::isfinite(op.all_cores_s) || op.all_cores_s < 0)) {
      return where + ": all-cores latency must be finite and ≥ 0";
    }
    if (op.UsesTensorCore() && num_tc < 1) return where + " needs a tensor core; num_tc is 0";
    if (op.UsesVectorCore() && num_vc < 1) return where + " needs a vector core; num_vc is 0";
  }
  if (!std::isfinite(host_s) || host_s < 0) return "the host's issue time must be finite and ≥ 0";
  for (const auto& [from, to] : edges) {
    if (from < 0 || to < 0 || from >= n || to >= n) {
      return "edge (" + std::to_string(from) + ", " + std::to_string(to) + ") names no op";
    }
    if (from == to) return "edge on op '" + ops[from].name + "' is a self loop";
  }
  return "";
}

std::optional<int> ScheduleProblem::OpOnCycle() const {
  // Kahn's algorithm leaves the ops on or behind a cycle; following their unfinished predecessors
  // back n steps from one of them lands on the cycle.
  const std::size_t n = ops.size();
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> succ(n), pred(n);
  for (const auto& [a, b] : edges) {
    ++indegree[static_cast<std::size_t>(b)];
    succ[static_cast<std::size_t>(a)].push_back(b);
    pred[static_cast<std::size_t>(b)].push_back(a);
  }
  std::vector<int> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (indegree[i] == 0) ready.push_back(static_cast<int>(i));
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    ++done;
    for (int j : succ[static_cast<std::size_t>(i)]) {
      if (--indegree[static_cast<std::size_t>(j)] == 0) ready.push_back(j);
    }
  }
  if (done == n) return std::nullopt;
  int at = 0;
  while (indegree[static_cast<std::size_t>(at)] == 0) ++at;
  for (std::size_t step = 0; step < n; ++step) {
    for (int q : pred[static_cast<std::size_t>(at)]) {
      if (indegree[static_cast<std::size_t>(q)] > 0) {
        at = q;
        break;
      }
    }
  }
  return at;
}

double ScheduleProblem::SequentialMakespan() const {
  double total = 0;
  for (const auto& op : ops) total += op.UsesCores() ? op.all_cores_s : op.single_core_s;
  return total;
}

double ScheduleProblem::SerialMakespan() const {
  double total = 0;
  for (const auto& op : ops) total += op.MinLatency();
  return total;
}

namespace {

std::string CheckCores(const ScheduleProblem& p, const ScheduleOp& op, const ScheduledOp& s) {
  auto all = [](int count) {
    std::vector<int> v(count);
    for (int c = 0; c < count; ++c) v[c] = c;
    return v;
  };
  const std::string where = "op '" + op.name + "'";
  if (!op.UsesCores()) {
    if (s.intra_op || !s.tensor_cores.empty() || !s.vector_cores.empty()) {
      return where + ": a link op holds no cores and is never intra-op";
    }
    return "";
  }
  const std::vector<int> want_tc = op.UsesTensorCore() ? all(p.num_tc) : std::vector<int>{};
  const std::vector<int> want_vc = op.UsesVectorCore() ? all(p.num_vc) : std::vector<int>{};
  if (s.intra_op) {
    if (s.tensor_cores != want_tc || s.vector_cores != want_vc) {
      return where + ": intra-op must hold every core of its class(es)";
    }
    return "";
  }
  const std::size_t tc = op.UsesTensorCore() ? 1 : 0, vc = op.UsesVectorCore() ? 1 : 0;
  if (s.tensor_cores.size() != tc || s.vector_cores.size() != vc) {
    return where + ": a single-core op holds one core of each class it uses";
  }
  for (int c : s.tensor_cores) {
    if (c < 0 || c >= p.num_tc)
      return where + ": tensor core " + std::to_string(c) + " does not exist";
  }
  for (int c : s.vector_cores) {
    if (c < 0 || c >= p.num_vc)
      return where + ": vector core " + std::to_string(c) + " does not exist";
  }
  if (op.cls == ScheduleClass::kFused &&
      (s.tensor_cores[0] != s.vector_cores[0] || s.tensor_cores[0] >= p.PairedCores())) {
    return where + ": a fused op must run on a paired core (same index < min(num_tc, num_vc))";
  }
  return "";
}

bool Share(const std::vector<int>& a, const std::vector<int>& b) {
  for (int x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  }
  return false;
}

}  // namespace

std::string CheckSchedule(const ScheduleProblem& problem, const ScheduleResult& schedule,
                          double tolerance_s) {
  const auto& ops = problem.ops;
  const auto& s = schedule.ops;
  if (s.size() != ops.size()) return "the schedule has a different number of ops than the problem";
  double last = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string where = "op '" + ops[i].name + "'";
    if (s[i].start_s < -tolerance_s) return where + " starts before 0";
    if (std::abs(s[i].duration_s - ops[i].Latency(s[i].intra_op)) > tolerance_s) {
      return where + ": duration does not match its mode";
    }
    if (std::string e = CheckCores(problem, ops[i], s[i]); !e.empty()) return e;
    last = std::max(last, s[i].Finish());
  }
  for (const auto& [from, to] : problem.edges) {
    if (s[to].start_s < s[from].Finish() - tolerance_s) {
      return "op '" + ops[to].name + "' starts before its predecessor '" + ops[from].name +
             "' finishes";
    }
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    for (std::size_t j = i + 1; j < ops.size(); ++j) {
      if (!ops[i].UsesCores() || !ops[j].UsesCores()) continue;
      const bool overlap =
          s[i].start_s < s[j].Finish() - tolerance_s && s[j].start_s < s[i].Finish() - tolerance_s;
      if (!overlap) continue;
      const std::string pair = "ops '" + ops[i].name + "' and '" + ops[j].name + "'";
      if (s[i].intra_op || s[j].intra_op) return pair + " overlap while one is intra-op";
      if (Share(s[i].tensor_cores, s[j].tensor_cores) ||
          Share(s[i].vector_cores, s[j].vector_cores)) {
        return pair + " overlap on the same core";
      }
    }
  }
  if (std::abs(schedule.makespan_s - last) > tolerance_s) {
    return "the makespan is not the last finish time";
  }
  return "";
}

bool RelaxInto(ScheduleProblem& relaxed, const ScheduleProblem& other) {
  if (relaxed.ops.size() != other.ops.size() || relaxed.edges != other.edges) return false;
  for (std::size_t i = 0; i < other.ops.size(); ++i) {
    if (relaxed.ops[i].cls != other.ops[i].cls || relaxed.ops[i].name != other.ops[i].name) {
      return false;
    }
  }
  for (std::size_t i = 0; i < other.ops.size(); ++i) {
    ScheduleOp& op = relaxed.ops[i];
    op.single_core_s = std::min(op.single_core_s, other.ops[i].single_core_s);
    op.all_cores_s = std::min(op.all_cores_s, other.ops[i].all_cores_s);
  }
  relaxed.num_tc = std::max(relaxed.num_tc, other.num_tc);
  relaxed.num_vc = std::max(relaxed.num_vc, other.num_vc);
  relaxed.host_s = std::min(relaxed.host_s, other.host_s);
  return true;
}

}  // namespace phaze
