// From a layer's operator graph to the scheduler's input (DESIGN §5): the ops that take time, with
// ℓ_i and ℓ̂_i from an estimator on one architecture, and the dependencies between them. Views
// (no work) are contracted — their predecessors precede their successors. Collectives become
// `link` ops lasting the network model's time for the op's tensor-parallel group (innermost ranks,
// stride 1; identity collectives, such as Megatron's f in the forward pass, are contracted). Ops the estimator cannot cost raise
// UnsupportedOpError from the estimator. The problem's host_s is the architecture's host_kernel_s
// times the kernels of the pass: the estimates' kernel counts and one per collective (NCCL's).
// When the estimator estimated ops and every estimate, on every arch, is exclusive
// (OpEstimate::exclusive: a GPU or a TPU running one op at a time), the problem has one tensor
// and one vector core and each op that takes cores is a fused op at its all-cores time: one op at
// a time, collectives beside them (`phaze schedule` shows them all on TC0+VC0).
#pragma once

#include <span>
#include <string>

#include "phaze/arch/arch_config.hpp"
#include "phaze/estimate/estimator.hpp"
#include "phaze/graph/layer_graph.hpp"
#include "phaze/graph/operator_graph.hpp"
#include "phaze/network/network.hpp"
#include "phaze/schedule/schedule_problem.hpp"

namespace phaze {

ScheduleProblem BuildScheduleProblem(const OperatorGraph& graph, Pass pass,
                                     const Estimator& estimator, const ArchConfig& arch,
                                     const Network& network, std::string name);

// The relaxation of the pass on every arch of `archs` (RelaxInto of each one's problem: each op as
// fast, each core count as large, the host as quick as on any of them), its energy the first
// one's. Archs that agree on collective_overlap share one walk of the graph and one OpWork per op;
// otherwise each problem is built and relaxed in turn. Throws Error when the archs give the pass
// different ops. The relaxation is of the problems as the walk builds them: when every arch's
// estimates are exclusive, the relaxed problem is then made one op at a time (above), each op at
// its least all-cores time — still a relaxation of every member's problem, each itself one op at
// a time; a family that mixes exclusive and concurrent archs keeps the cores and both modes.
ScheduleProblem BuildScheduleProblem(const OperatorGraph& graph, Pass pass,
                                     const Estimator& estimator, std::span<const ArchConfig> archs,
                                     const Network& network, std::string name);

// How long the pass lasts: its schedule's makespan, or the host's time to issue it when the host
// is slower (a two-stage pipeline, host then device, whose queue hides the faster stage).
double PassSeconds(const ScheduleProblem& problem, const ScheduleResult& result);

// The operator graph a pass runs: the forward graph for forward and recompute, else backward.
const OperatorGraph& PassGraph(const UniqueLayer& layer, Pass pass);

}  // namespace phaze
