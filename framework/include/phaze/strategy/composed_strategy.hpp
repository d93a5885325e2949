// One strategy on top of another (run config `strategy: {name: S, over: {name: I, width: k}}`):
// I slices the full graph k ways over consecutive ranks; S slices I's per-device graph t/k ways
// across those groups, so a width t means k·(t/k) devices. A strategy applied to a graph that is
// already a slice of width g (LayerGraph::tensor_parallel) puts its collectives g ranks apart and
// multiplies LayerGraph::weight_replicas by the devices that hold its weights whole; that is how
// S's collectives land on the right ranks and the gradient reduction spans S's replicas.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "phaze/plugin/registry.hpp"
#include "phaze/strategy/parallelism_strategy.hpp"

namespace phaze {

// One of the run's parallelism strategies (`strategy: S`, `strategy: {name, params, over}`):
// `over: {name: I, width: k}`: I splits k ways over consecutive ranks and S splits the rest of
// each width t (t/k ways) across those groups (ComposedStrategy).
struct StrategyChoice {
  ComponentChoice component{"megatron", std::nullopt, std::nullopt};
  struct Over {
    ComponentChoice component;
    std::int64_t width = 1;
  };
  std::optional<Over> over;
  std::string Name() const;  // "S", or "S over I×k" (its name in plans and reports)
  // {name, params, over: {name, width, params}}: as a run config states it (results.json,
  // predict.json, plan.json).
  Json ToJson() const;
  static StrategyChoice Named(std::string name);  // a registered strategy with no params
};

class ComposedStrategy : public ParallelismStrategy {
 public:
  ComposedStrategy(std::shared_ptr<const ParallelismStrategy> inner, std::string inner_name,
                   std::int64_t inner_width, std::shared_ptr<const ParallelismStrategy> outer,
                   std::string outer_name);
  std::string Refusal(const LayerGraph& full, std::int64_t width) const override;
  LayerGraph Slice(const LayerGraph& full, std::int64_t width) const override;

 private:
  LayerGraph InnerSlice(const LayerGraph& full) const;

  std::shared_ptr<const ParallelismStrategy> inner_;
  std::string inner_name_;
  std::int64_t inner_width_;
  std::shared_ptr<const ParallelismStrategy> outer_;
  std::string outer_name_;
};

// One of the run's strategies from the registry, composed over its `over` when given. Its name in
// plans and reports is choice.Name().
std::shared_ptr<ParallelismStrategy> CreateStrategy(const Registry& registry,
                                                    const StrategyChoice& choice);
// Every strategy of the run, in the order listed.
std::vector<std::shared_ptr<const ParallelismStrategy>> CreateRunStrategies(
    const Registry& registry, const std::vector<StrategyChoice>& choices);

}  // namespace phaze
