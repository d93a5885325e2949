// The "megatron" parallelism strategy: Megatron-LM tensor model parallelism, as implemented by the
// Megatron slicer beside it (semantics in megatron_slicer.hpp).
#include <memory>

#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "megatron_slicer.hpp"

namespace phaze::strategies {

plugin::PluginInfo MegatronPlugin() {
  return {plugin::kAbiVersion, "megatron", "1.0.0", "Megatron-LM tensor model parallelism",
          [](Registry& registry) {
            registry.AddStrategy(
                "megatron",
                "column/row-parallel GEMMs, split heads, vocabulary-parallel embedding and loss",
                [](const ConfigNode& params) {
                  const auto options = ReadTensorParallelOptions(params, {});
                  return std::make_shared<TensorParallelStrategy>(options);
                });
          }};
}

}  // namespace phaze::strategies

PHAZE_PLUGIN_ENTRY(phaze::strategies::MegatronPlugin)
