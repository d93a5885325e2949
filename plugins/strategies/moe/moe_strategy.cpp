// The "moe" parallelism strategy: expert parallelism for mixture-of-experts blocks — E/e experts
// per expert-parallel rank, whole or split over the width (expert_tensor_parallel), all-to-all
// dispatch and combine — with Megatron tensor + sequence parallelism of the same width for
// attention, norms, embedding and head. Implemented by the
// Megatron slicer (semantics in plugins/strategies/megatron/megatron_slicer.hpp).
// On a dense model it is sequence parallelism.
#include <memory>

#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "megatron_slicer.hpp"

namespace phaze::strategies {

plugin::PluginInfo MoePlugin() {
  return {plugin::kAbiVersion, "moe", "1.0.0",
          "expert parallelism for mixture-of-experts blocks (+ tensor/sequence parallel attention)",
          [](Registry& registry) {
            registry.AddStrategy("moe",
                                 "E/e experts per expert-parallel rank (whole, or split over the "
                                 "width), all-to-all dispatch and combine",
                                 [](const ConfigNode& params) {
                                   const auto options = ReadTensorParallelOptions(
                                       params, {.sequence_parallel = true, .expert_parallel = true});
                                   return std::make_shared<TensorParallelStrategy>(options);
                                 });
          }};
}

}  // namespace phaze::strategies

PHAZE_PLUGIN_ENTRY(phaze::strategies::MoePlugin)
