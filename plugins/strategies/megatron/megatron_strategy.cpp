// The "megatron" parallelism strategy: Megatron-LM tensor model parallelism, as implemented by the
// Megatron slicer beside it (semantics in megatron_slicer.hpp).
#include <memory>

#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "megatron_slicer.hpp"

namespace phaze::strategies {

namespace {

class MegatronStrategy : public ParallelismStrategy {
 public:
  std::string Refusal(const LayerGraph& full, std::int64_t width) const override {
    return TensorParallelRefusal(full, width, {});
  }
  LayerGraph Slice(const LayerGraph& full, std::int64_t width) const override {
    return TensorParallelSlice(full, width, {});
  }
};

}  // namespace

plugin::PluginInfo MegatronPlugin() {
  return {plugin::kAbiVersion, "megatron", "1.0.0", "Megatron-LM tensor model parallelism",
          [](Registry& registry) {
            registry.AddStrategy(
                "megatron",
                "column/row-parallel GEMMs, split heads, vocabulary-parallel embedding and loss",
                [](const ConfigNode& params) {
                  params.ExpectKeys(std::initializer_list<std::string_view>{});
                  return std::make_shared<MegatronStrategy>();
                });
          }};
}

}  // namespace phaze::strategies

PHAZE_PLUGIN_ENTRY(phaze::strategies::MegatronPlugin)
