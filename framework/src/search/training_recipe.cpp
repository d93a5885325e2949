#include "phaze/search/training_recipe.hpp"

#include <filesystem>

#include "phaze/core/config_node.hpp"
#include "phaze/core/preset_file.hpp"

namespace phaze {

void ApplyTrainingRecipe(const std::string& name_or_path, RunConfig::Training& training) {
  const std::filesystem::path file = FindPresetFile(
      name_or_path, "recipes", "recipe", [](const std::string&) { return true; });
  const ConfigNode root = ConfigNode::ParseFile(file.string());
  root.ExpectKeys({"name", "description", "training"});
  const ConfigNode t = root.Child("training");
  t.ExpectKeys({"attention", "loss", "precision", "fp8_recipe", "sharding", "hybrid_all_reduce",
                "pipeline_sends", "gradient_reduction_overlap", "tensor_parallel_overlap",
                "fp8_param_gather", "fp8_param_storage", "gradient_reduction_precision"});
  ReadTrainingKeys(t, training);
  training.recipe = root.Optional("name") ? root.Child("name").AsString() : file.stem().string();
}

}  // namespace phaze
