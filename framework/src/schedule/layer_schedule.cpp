#include "phaze/schedule/layer_schedule.hpp"

#include <algorithm>

#include "phaze/estimate/energy_model.hpp"

namespace phaze {

const OperatorGraph& PassGraph(const UniqueLayer& layer, Pass pass) {
  return pass == Pass::kBackward ? layer.backward : layer.forward;
}

ScheduleProblem BuildScheduleProblem(const OperatorGraph& graph, Pass pass,
                                     const Estimator& estimator, const ArchConfig& arch,
                                     const Network& network, std::string name) {
  ScheduleProblem problem;
  problem.name = std::move(name);
  problem.num_tc = static_cast<int>(arch.num_tc);
  problem.num_vc = static_cast<int>(arch.num_vc);
  const auto& ops = graph.Ops();
  const auto preds = graph.Predecessors();
  // kept[i]: the op's index in the problem, or −1 when contracted; frontier[i]: the kept ops
  // nearest above a contracted op.
  std::vector<int> kept(ops.size(), -1);
  std::vector<std::vector<int>> frontier(ops.size());
  std::int64_t kernels = 0;  // the host issues each (ArchConfig::host_kernel_s)
  for (int i : graph.TopologicalOrder()) {
    const Operator& op = ops[i];
    std::vector<int> above;
    for (int q : preds[i]) {
      if (kept[q] >= 0) {
        above.push_back(kept[q]);
      } else {
        above.insert(above.end(), frontier[q].begin(), frontier[q].end());
      }
    }
    std::sort(above.begin(), above.end());
    above.erase(std::unique(above.begin(), above.end()), above.end());

    ScheduleOp s;
    s.name = op.name;
    bool keep = true;
    if (op.kind == OpKind::kCollective) {
      const double time =
          op.collective ? network.CollectiveS(*op.collective, static_cast<double>(op.collective_bytes),
                                     CommGroup{op.collective_group, op.collective_stride})
               : 0.0;
      keep = time > 0;
      if (keep) ++kernels;  // one NCCL kernel
      if (keep) {
        problem.energy.network_j +=
            network.CollectiveJ(*op.collective, static_cast<double>(op.collective_bytes),
                                CommGroup{op.collective_group, op.collective_stride});
      }
      s.cls = ScheduleClass::kLink;
      s.single_core_s = s.all_cores_s = time * arch.collective_overlap;
      const double exposed = time * (1 - arch.collective_overlap);
      if (keep && exposed > 0) {
        // The part that cannot overlap holds the whole device (every core, as a fused op whose
        // single-core form is never worth choosing); the rest follows on the link.
        ScheduleOp held;
        held.name = op.name + (s.all_cores_s > 0 ? ".exposed" : "");
        held.cls = ScheduleClass::kFused;
        held.all_cores_s = exposed;
        held.single_core_s = exposed * static_cast<double>(problem.num_tc + problem.num_vc);
        const int index = static_cast<int>(problem.ops.size());
        problem.ops.push_back(std::move(held));
        for (int q : above) problem.edges.emplace_back(q, index);
        if (s.all_cores_s == 0) {
          kept[i] = index;
          continue;
        }
        above = {index};
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
        problem.energy += e.energy ? *e.energy : EnergyModel::Op(work, arch);
        s.single_core_s = e.single_core_s;
        s.all_cores_s = e.all_cores_s;
        kernels += e.kernels;
      }
    }
    if (!keep) {
      frontier[i] = std::move(above);
      continue;
    }
    kept[i] = static_cast<int>(problem.ops.size());
    problem.ops.push_back(std::move(s));
    for (int q : above) problem.edges.emplace_back(q, kept[i]);
  }
  problem.host_s = static_cast<double>(kernels) * arch.host_kernel_s;
  return problem;
}

double PassSeconds(const ScheduleProblem& problem, const ScheduleResult& result) {
  return std::max(result.makespan_s, problem.host_s);
}

}  // namespace phaze
