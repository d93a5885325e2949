// The "moe" parallelism strategy: expert parallelism for mixture-of-experts blocks — experts/w
// whole experts per device, all-to-all dispatch and combine — with Megatron tensor + sequence
// parallelism of the same width for attention, norms, embedding and head. Implemented by the
// Megatron slicer (semantics in plugins/strategies/megatron/megatron_slicer.hpp).
// On a dense model it is sequence parallelism.
#include <memory>

#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"
#include "megatron_slicer.hpp"

namespace phaze::strategies {

namespace {

class MoeStrategy : public ParallelismStrategy {
 public:
  std::string Refusal(const LayerGraph& full, std::int64_t width) const override {
    return TensorParallelRefusal(full, width, Options());
  }
  LayerGraph Slice(const LayerGraph& full, std::int64_t width) const override {
    return TensorParallelSlice(full, width, Options());
  }

 private:
  static TensorParallelOptions Options() {
    TensorParallelOptions o;
    o.sequence_parallel = true;
    o.expert_parallel = true;
    return o;
  }
};

}  // namespace

plugin::PluginInfo MoePlugin() {
  return {plugin::kAbiVersion, "moe", "1.0.0",
          "expert parallelism for mixture-of-experts blocks (+ tensor/sequence parallel attention)",
          [](Registry& registry) {
            registry.AddStrategy("moe",
                                 "experts/w experts per device, all-to-all dispatch and combine",
                                 [](const ConfigNode& params) {
                                   params.ExpectKeys(std::initializer_list<std::string_view>{});
                                   return std::make_shared<MoeStrategy>();
                                 });
          }};
}

}  // namespace phaze::strategies

PHAZE_PLUGIN_ENTRY(phaze::strategies::MoePlugin)
