// The "sequence_parallel" parallelism strategy: Megatron-LM tensor parallelism with sequence
// parallelism (Korthikanti et al. 2022) — norms, dropouts and residual adds on s/w of the
// sequence, reduce-scatter / all-gather in place of each all-reduce. Implemented by the Megatron
// slicer (semantics in plugins/strategies/megatron/megatron_slicer.hpp).
#include <memory>

#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "megatron_slicer.hpp"

namespace phaze::strategies {

plugin::PluginInfo SequenceParallelPlugin() {
  return {plugin::kAbiVersion, "sequence_parallel", "1.0.0",
          "Megatron-LM tensor parallelism with sequence parallelism", [](Registry& registry) {
            registry.AddStrategy("sequence_parallel",
                                 "tensor parallelism; norms and dropouts split along the sequence; "
                                 "reduce-scatter/all-gather",
                                 [](const ConfigNode& params) {
                                   const auto options = ReadTensorParallelOptions(params, {.sequence_parallel = true});
                                   return std::make_shared<TensorParallelStrategy>(options);
                                 });
          }};
}

}  // namespace phaze::strategies

PHAZE_PLUGIN_ENTRY(phaze::strategies::SequenceParallelPlugin)
