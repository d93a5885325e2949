// Depth-first branch and bound over schedules (DESIGN §5, the scheduler's exact fast path): proves
// that no schedule of a layer — with each op's modes restricted as given — is shorter than a
// target, or finds one that is. It closes gaps the bounds of list_schedule.hpp leave open when
// the loss is a packing one (long single-core ops that cannot share the tensor cores evenly),
// without the ILP.
//
// The tree is the serial schedule generation of list_schedule.hpp over every list order and mode,
// restricted to orders by start time (ties: by index) with every op at its earliest start: each
// active schedule — and so an optimal one — is visited exactly once, and an op that could start
// before the op placed last is never tried after it. A sink (an op no other op waits for) takes
// all cores only after every other op: moved there, with the ops after it moved up by its
// duration, it makes no schedule longer — unless a link op, which runs beside an all-cores op,
// could overlap it. Cores are pools per class (a fused op takes one tensor core, one vector core
// and one of the paired cores; an intra-op op all of them), a relaxation of the core identities
// that is exact unless fused ops' pairs bind; complete schedules are replayed by GenerateSchedule
// on real cores. A node is pruned when a bound on every completion — the longest remaining path
// from the latest start, per class the remaining work packed into the free cores from then on
// plus the smallest tail, plus the sinks that can only take all cores — reaches the target.
#pragma once

#include <optional>
#include <vector>

#include "phaze/schedule/precedence.hpp"
#include "phaze/schedule/schedule_problem.hpp"

namespace phaze {

// Per op: -1 either mode, 0 one core, 1 all cores (only where intra-op parallelism is useful;
// elsewhere one core regardless).
using ModeRestriction = std::vector<signed char>;

struct ScheduleSearchResult {
  // The whole tree was searched: every schedule with the modes allowed is at least
  // `lower_bound_s`, which is then at least min(`enough`, the shortest such schedule).
  bool complete = false;
  double lower_bound_s = 0;
  std::optional<ScheduleResult> better;  // a real schedule shorter than `upper`, if one was found
  long nodes = 0;
};

// Searches for schedules shorter than `enough` (the bound the caller needs, e.g. the best known
// makespan less the gap it may keep), tightening as it finds shorter ones; gives up after
// `max_nodes` nodes. `upper` is the best known makespan, so `better` is only what beats it.
ScheduleSearchResult SearchSchedules(const ScheduleProblem& problem, const Precedence& precedence,
                                     const ModeRestriction& modes, double upper, double enough,
                                     long max_nodes);

}  // namespace phaze
