// Schedule problems and schedules as files: the standalone DAG format `phaze schedule --graph`
// reads, and the JSON schedule it writes (documented in share/schedule/README.md).
//
//   {"num_tc": 2, "num_vc": 1,
//    "ops": [{"name": "qkv", "class": "tensor"|"vector"|"fused"|"link",
//             "single_core_s": 1.5e-4, "all_cores_s": 9.0e-5}, …],
//    "edges": [{"from": "qkv", "to": "softmax"}, …]}
#pragma once

#include "phaze/core/config_node.hpp"
#include "phaze/core/json.hpp"
#include "phaze/schedule/schedule_problem.hpp"

namespace phaze {

// Throws ConfigError with the location of what is wrong (unknown class, duplicate op name, edge
// naming no op, negative latency, a class without cores).
ScheduleProblem ParseScheduleProblem(const ConfigNode& root);
Json ScheduleProblemToJson(const ScheduleProblem& problem);

// {"makespan_s", "sequential_s", "stats": {...}, "ops": [{"name", "class", "start_s",
// "duration_s", "intra_op", "tensor_cores", "vector_cores"}, …]} — cores as [first, last] ranges
// for intra-op ops so 512 vector cores stay one line.
Json ScheduleToJson(const ScheduleProblem& problem, const ScheduleResult& schedule);

// A Gantt chart: one row per core that runs something (intra-op ops span every row of their
// class), one for the links; time in µs on the axis; every bar has a tooltip.
std::string ScheduleToSvg(const ScheduleProblem& problem, const ScheduleResult& schedule,
                          const std::string& title);

}  // namespace phaze
