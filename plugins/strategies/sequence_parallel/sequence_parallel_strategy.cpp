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

namespace {

class SequenceParallelStrategy : public ParallelismStrategy {
 public:
  std::string Refusal(const LayerGraph& full, std::int64_t width) const override {
    return TensorParallelRefusal(full, width, {true});
  }
  LayerGraph Slice(const LayerGraph& full, std::int64_t width) const override {
    return TensorParallelSlice(full, width, {true});
  }
};

}  // namespace

plugin::PluginInfo SequenceParallelPlugin() {
  return {plugin::kAbiVersion, "sequence_parallel", "1.0.0",
          "Megatron-LM tensor parallelism with sequence parallelism", [](Registry& registry) {
            registry.AddStrategy("sequence_parallel",
                                 "tensor parallelism; norms and dropouts split along the sequence; "
                                 "reduce-scatter/all-gather",
                                 [](const ConfigNode& params) {
                                   params.ExpectKeys(std::initializer_list<std::string_view>{});
                                   return std::make_shared<SequenceParallelStrategy>();
                                 });
          }};
}

}  // namespace phaze::strategies

PHAZE_PLUGIN_ENTRY(phaze::strategies::SequenceParallelPlugin)
