#include "phaze/schedule/layer_schedule.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "phaze/core/error.hpp"
#include "phaze/estimate/energy_model.hpp"
#include "phaze/graph/tensor_parallel_overlap.hpp"

namespace phaze {

const OperatorGraph& PassGraph(const UniqueLayer& layer, Pass pass) {
  return pass == Pass::kBackward ? layer.backward : layer.forward;
}

ScheduleProblem BuildScheduleProblem(const OperatorGraph& graph, Pass pass,
                                     const Estimator& estimator, const ArchConfig& arch,
                                     const Network& network, std::string name) {
  return BuildScheduleProblem(graph, pass, estimator, std::span(&arch, 1), network,
                              std::move(name));
}

namespace {

// A layer of exclusive ops (OpEstimate::exclusive) as the scheduler's problem: every op that
// takes cores runs alone on the device, at its all-cores time, as a fused op on the one pair of
// cores; collectives keep the links beside it. The device's one-core times (all-cores × its
// groups) on all its cores had left room the device does not have (four one-MXU GEMMs on a TPU v4
// at twice its peak together) and bounds that could not see one op at a time (a 64-expert block's
// segments on an H100 took 3-27 s each in the schedule search, most ending at its budget with a
// 10-19% gap open); here the bounds see the one pair and the list schedule meets them at once.
void RunOneAtATime(ScheduleProblem& problem) {
  problem.num_tc = problem.num_vc = 1;
  for (ScheduleOp& op : problem.ops) {
    if (!op.UsesCores()) continue;
    op.cls = ScheduleClass::kFused;
    op.single_core_s = op.all_cores_s;
  }
}

// Whether the estimator said every op it estimated on every arch is exclusive, and how many it
// estimated (the exposed parts of collectives that hold the device are not its ops).
struct Exclusivity {
  int estimated = 0;
  bool all = true;
  bool Holds() const { return estimated > 0 && all; }
};

// One walk of the graph for every arch of `archs`, counting its estimates in *exclusivity.
ScheduleProblem WalkGraph(const OperatorGraph& graph, Pass pass, const Estimator& estimator,
                          std::span<const ArchConfig> archs, const Network& network,
                          std::string name, Exclusivity* exclusivity) {
  const ArchConfig& arch = archs.front();
  // One walk of the graph for every arch: the same ops and edges, each op's latencies the least
  // over the archs — what RelaxInto makes of the archs' own problems, without building them.
  ScheduleProblem problem;
  problem.name = std::move(name);
  problem.num_tc = static_cast<int>(arch.num_tc);
  problem.num_vc = static_cast<int>(arch.num_vc);
  int least_cores = problem.num_tc + problem.num_vc;  // of a whole device: the held ops' count
  for (const ArchConfig& a : archs.subspan(1)) {
    problem.num_tc = std::max(problem.num_tc, static_cast<int>(a.num_tc));
    problem.num_vc = std::max(problem.num_vc, static_cast<int>(a.num_vc));
    least_cores = std::min(least_cores, static_cast<int>(a.num_tc + a.num_vc));
  }
  const auto& ops = graph.Ops();
  const auto preds = graph.Predecessors();
  // Per graph op i: kept[i], its index in the problem (−1 when contracted, or for an all-gather
  // whose whole time runs beside the GEMMs below); frontier[i], the problem ops a contracted op's
  // successors wait for instead; join[i], what its successors wait for besides it. For the
  // chunked collectives (Operator::gemm_overlap, graph/tensor_parallel_overlap.hpp): pending[i],
  // the link parts of all-gathers above that a weight GEMM below may run beside (its successors
  // then wait for them) and any other op waits for; per problem op k that a chunked collective
  // right below may run beside (a weight GEMM, or such a collective), beside[k]: what that
  // collective's link part then starts after instead of k.
  std::vector<int> kept(ops.size(), -1);
  std::vector<std::vector<int>> frontier(ops.size()), join(ops.size()), pending(ops.size());
  std::vector<std::optional<std::vector<int>>> beside;
  const auto add = [&](ScheduleOp op, const std::vector<int>& after) {
    const int index = static_cast<int>(problem.ops.size());
    problem.ops.push_back(std::move(op));
    beside.emplace_back();
    for (int q : after) problem.edges.emplace_back(q, index);
    return index;
  };
  const auto unique = [](std::vector<int> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  // Per arch: the host issues each (ArchConfig::host_kernel_s).
  std::vector<std::int64_t> kernels(archs.size(), 0);
  for (int i : graph.TopologicalOrder()) {
    const Operator& op = ops[i];
    std::vector<int> above, waiting;
    for (int q : preds[i]) {
      if (kept[q] >= 0) {
        above.push_back(kept[q]);
      } else {
        above.insert(above.end(), frontier[q].begin(), frontier[q].end());
      }
      above.insert(above.end(), join[q].begin(), join[q].end());
      waiting.insert(waiting.end(), pending[q].begin(), pending[q].end());
    }
    above = unique(std::move(above));
    waiting = unique(std::move(waiting));
    std::vector<int> after = above;  // what an op here that runs beside nothing waits for
    after.insert(after.end(), waiting.begin(), waiting.end());
    after = unique(std::move(after));

    ScheduleOp s;
    s.name = op.name;
    bool keep = true;
    if (op.kind == OpKind::kCollective) {
      const double time =
          op.collective ? network.CollectiveS(*op.collective, static_cast<double>(op.collective_bytes),
                                     CommGroup{op.collective_group, op.collective_stride})
               : 0.0;
      keep = time > 0;
      if (keep) {
        for (auto& count : kernels) ++count;  // one NCCL kernel
        problem.energy.network_j +=
            network.CollectiveJ(*op.collective, static_cast<double>(op.collective_bytes),
                                CommGroup{op.collective_group, op.collective_stride});
      }
      s.cls = ScheduleClass::kLink;
      // A chunked collective's share beside compute (a chip whose collectives never contend
      // with compute hides them whole).
      const bool chunked = keep && op.gemm_overlap > 0 &&
                           (*op.collective == CollectiveKind::kAllGather ||
                            *op.collective == CollectiveKind::kReduceScatter);
      const double share = chunked
                               ? ChunkedCollectiveShare(op.gemm_overlap, arch.collective_overlap)
                               : arch.collective_overlap;
      s.single_core_s = s.all_cores_s = time * share;
      const double exposed = time * (1 - share);
      // The part that cannot overlap holds the whole device (every core, as a fused op whose
      // single-core form is never worth choosing).
      const auto hold = [&](const std::vector<int>& before) {
        ScheduleOp part;
        part.name = op.name + (s.all_cores_s > 0 ? ".exposed" : "");
        part.cls = ScheduleClass::kFused;
        part.all_cores_s = exposed;
        part.single_core_s = exposed * static_cast<double>(least_cores);
        return add(std::move(part), before);
      };
      std::vector<int> anchors, start;
      if (chunked) {
        for (int q : above) (beside[static_cast<std::size_t>(q)] ? anchors : start).push_back(q);
      }
      if (!anchors.empty()) {
        // Beside the GEMM above (a reduce-scatter of its output; in backward, the re-gathered
        // input and the input gradient's reduce-scatter, one after the other, beside the
        // input-gradient GEMM): the link part starts with the GEMM, the exposed part follows
        // both, so the pair lasts max(GEMM, link part) + exposed part.
        for (int q : anchors) {
          const auto& more = *beside[static_cast<std::size_t>(q)];
          start.insert(start.end(), more.begin(), more.end());
        }
        start.insert(start.end(), waiting.begin(), waiting.end());
        start = unique(std::move(start));
        const int link = add(std::move(s), start);
        if (exposed > 0) {
          after.push_back(link);
          kept[i] = hold(after);
        } else {
          kept[i] = link;
          join[i] = anchors;
        }
        start.push_back(link);  // a chunked collective below follows this one on the link
        beside[static_cast<std::size_t>(kept[i])] = std::move(start);
        continue;
      }
      const int held = keep && exposed > 0 ? hold(after) : -1;
      if (held >= 0 && s.all_cores_s == 0) {
        kept[i] = held;
        continue;
      }
      if (chunked) {
        // Feeding the GEMMs below (an all-gather of their input): they start once its exposed
        // part is done, its link part beside them.
        pending[i] = {add(std::move(s), held >= 0 ? std::vector<int>{held} : after)};
        if (held >= 0) {
          kept[i] = held;
        } else {
          frontier[i] = above;
          join[i] = waiting;
        }
        continue;
      }
      if (held >= 0) {
        above = {held};
        waiting.clear();
        after = above;
      }
    } else {
      switch (op.Core()) {
        case CoreClass::kTensor:
          s.cls = ScheduleClass::kTensor;
          break;
        case CoreClass::kVector:
          s.cls = ScheduleClass::kVector;
          break;
        case CoreClass::kFused:
          s.cls = ScheduleClass::kFused;
          break;
        case CoreClass::kNone:
          keep = false;
          break;
      }
      if (keep) {
        const OpWork work = OpWork::Of(op, graph);
        const OpEstimate e = estimator.Estimate(work, arch, pass);
        problem.energy += e.energy ? *e.energy : EnergyModel::Op(work, arch);  // the first arch's
        s.single_core_s = e.single_core_s;
        s.all_cores_s = e.all_cores_s;
        ++exclusivity->estimated;
        exclusivity->all = exclusivity->all && e.exclusive;
        kernels[0] += e.kernels;
        for (std::size_t a = 1; a < archs.size(); ++a) {
          const OpEstimate other = estimator.Estimate(work, archs[a], pass);
          exclusivity->all = exclusivity->all && other.exclusive;
          s.single_core_s = std::min(s.single_core_s, other.single_core_s);
          s.all_cores_s = std::min(s.all_cores_s, other.all_cores_s);
          kernels[a] += other.kernels;
        }
      }
    }
    if (!keep) {
      // Contracted: its successors wait for what it waited for.
      frontier[i] = std::move(above);
      pending[i] = std::move(waiting);
      continue;
    }
    if (op.kind == OpKind::kGemm) {
      // A weight GEMM: beside the chunked all-gathers above it (its successors wait for them),
      // and a chunked collective below may run beside it.
      kept[i] = add(std::move(s), above);
      join[i] = std::move(waiting);
      beside[static_cast<std::size_t>(kept[i])] = std::move(above);
      continue;
    }
    kept[i] = add(std::move(s), after);
  }
  problem.host_s = std::numeric_limits<double>::infinity();
  for (std::size_t a = 0; a < archs.size(); ++a) {
    problem.host_s =
        std::min(problem.host_s, static_cast<double>(kernels[a]) * archs[a].host_kernel_s);
  }
  return problem;
}

}  // namespace

ScheduleProblem BuildScheduleProblem(const OperatorGraph& graph, Pass pass,
                                     const Estimator& estimator, std::span<const ArchConfig> archs,
                                     const Network& network, std::string name) {
  const ArchConfig& arch = archs.front();
  Exclusivity exclusivity;
  ScheduleProblem problem;
  if (std::ranges::any_of(archs, [&](const ArchConfig& a) {
        return a.collective_overlap != arch.collective_overlap;
      })) {
    // The collectives' exposed parts may differ in shape: one problem each, then relaxed.
    problem = WalkGraph(graph, pass, estimator, archs.first(1), network, name, &exclusivity);
    for (const ArchConfig& other : archs.subspan(1)) {
      if (!RelaxInto(problem, WalkGraph(graph, pass, estimator, std::span(&other, 1), network,
                                        name, &exclusivity))) {
        throw Error(name + ": architectures '" + arch.name + "' and '" + other.name +
                    "' give its " + std::string(ToString(pass)) + " pass different ops");
      }
    }
  } else {
    problem = WalkGraph(graph, pass, estimator, archs, network, std::move(name), &exclusivity);
  }
  if (exclusivity.Holds()) RunOneAtATime(problem);
  return problem;
}

double PassSeconds(const ScheduleProblem& problem, const ScheduleResult& result) {
  return std::max(result.makespan_s, problem.host_s);
}

}  // namespace phaze
