// libFuzzer target: the DAG reader of `phaze schedule --graph` and the scheduler's linear paths on
// what it accepts (precedence, articulation ops, list schedule). Bad input must be a ConfigError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "phaze/core/config_node.hpp"
#include "phaze/core/error.hpp"
#include "phaze/schedule/list_schedule.hpp"
#include "phaze/schedule/precedence.hpp"
#include "phaze/schedule/schedule_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const phaze::ScheduleProblem p =
        phaze::ParseScheduleProblem(phaze::ConfigNode::ParseString(text, "fuzz.json"));
    if (p.ops.size() > 64 || p.num_tc > 64 || p.num_vc > 64) return 0;  // keep runs fast
    const phaze::Precedence prec(p);
    (void)prec.ArticulationOps();
    const phaze::ScheduleResult r = phaze::HeuristicSchedule(p, prec);
    (void)phaze::MakespanLowerBound(p, prec, r.makespan_s, 16);
  } catch (const phaze::ConfigError&) {
  }
  return 0;
}
