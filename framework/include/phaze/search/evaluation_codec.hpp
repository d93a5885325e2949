// The binary form of a ConfigEvaluation (every model's plans and statistics,
// the prune record), as an MPI worker sends it to rank 0 (framework/host/cluster), and of a
// SearchTask (config index and incumbent), as rank 0 sends it to a worker. Exact: Decode(Encode(e)) has every field
// equal to e's, doubles bit for bit. Each type's fields are listed once (`Fields` in the .cpp), and
// both directions follow that list: a new field of PlanChoice, PlacementPlan, ModelEvaluation or
// PruneRecord is added there, once (the distributed-run test compares results.json).
#pragma once

#include <string>
#include <string_view>

#include "phaze/search/arch_search.hpp"

namespace phaze {

std::string EncodeConfigEvaluation(const ConfigEvaluation& evaluation);
// Throws Error on a malformed message.
ConfigEvaluation DecodeConfigEvaluation(std::string_view bytes);

std::string EncodeSearchTask(const SearchTask& task);
// Throws Error on a malformed message.
SearchTask DecodeSearchTask(std::string_view bytes);

}  // namespace phaze
