// Training recipes (share/recipes/): how a training stack runs, apart from the plan and the batch
// — the attention kernel, the share of the data-parallel reduction hidden behind backward, the
// reduction's number format, the stack's default sharding and precision. A recipe is a file
//   {name, description, training: {attention, precision, sharding, pipeline_sends,
//    gradient_reduction_overlap, tensor_parallel_overlap, gradient_reduction_precision}}
//   (any of them)
// applied before a run config's own training keys (`training.recipe`), or as a flag (`predict` and
// `plan --recipe`) over the run config. The name it is applied under is kept in
// RunConfig::Training::recipe and written to the outputs.
#pragma once

#include <string>

#include "phaze/search/run_config.hpp"

namespace phaze {

// Applies share/recipes/NAME.yaml (a name without '/') or the file to `training`: its keys
// override, and training.recipe becomes its name. A missing recipe or bad key throws ConfigError
// with the location (and the recipes there are, for a missing name).
void ApplyTrainingRecipe(const std::string& name_or_path, RunConfig::Training& training);

}  // namespace phaze
