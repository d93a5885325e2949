#include "phaze/strategy/composed_strategy.hpp"

#include <utility>

#include "phaze/core/json.hpp"
#include "phaze/plugin/registry.hpp"

namespace phaze {

ComposedStrategy::ComposedStrategy(std::shared_ptr<const ParallelismStrategy> inner,
                                   std::string inner_name, std::int64_t inner_width,
                                   std::shared_ptr<const ParallelismStrategy> outer,
                                   std::string outer_name)
    : inner_(std::move(inner)),
      inner_name_(std::move(inner_name)),
      inner_width_(inner_width),
      outer_(std::move(outer)),
      outer_name_(std::move(outer_name)) {}

LayerGraph ComposedStrategy::InnerSlice(const LayerGraph& full) const {
  LayerGraph g = inner_->Slice(full, inner_width_);
  g.tensor_parallel = full.tensor_parallel * inner_width_;  // the outer's groups stride over it
  return g;
}

std::string ComposedStrategy::Refusal(const LayerGraph& full, std::int64_t width) const {
  if (width % inner_width_ != 0) {
    return "the width " + std::to_string(width) + " is not a multiple of " + inner_name_ +
           "'s " + std::to_string(inner_width_);
  }
  if (std::string why = inner_->Refusal(full, inner_width_); !why.empty()) {
    return inner_name_ + " ×" + std::to_string(inner_width_) + ": " + why;
  }
  if (width == inner_width_) return "";
  if (std::string why = outer_->Refusal(InnerSlice(full), width / inner_width_); !why.empty()) {
    return outer_name_ + " ×" + std::to_string(width / inner_width_) + ": " + why;
  }
  return "";
}

LayerGraph ComposedStrategy::Slice(const LayerGraph& full, std::int64_t width) const {
  LayerGraph g = InnerSlice(full);
  if (width != inner_width_) g = outer_->Slice(g, width / inner_width_);
  return g;
}

std::string StrategyChoice::Name() const {
  if (!over) return component.name;
  return component.name + " over " + over->component.name + "×" + std::to_string(over->width);
}

Json StrategyChoice::ToJson() const {
  Json j = Json::MakeObject();
  j["name"] = component.name;
  j["params"] = component.Params().ToJson();
  if (over) {
    j["over"]["name"] = over->component.name;
    j["over"]["width"] = over->width;
    j["over"]["params"] = over->component.Params().ToJson();
  }
  return j;
}

StrategyChoice StrategyChoice::Named(std::string name) {
  StrategyChoice c;
  c.component.name = std::move(name);
  return c;
}

std::shared_ptr<ParallelismStrategy> CreateStrategy(const Registry& registry,
                                                    const StrategyChoice& choice) {
  auto strategy = registry.CreateStrategy(choice.component.name, choice.component.Params());
  if (!choice.over) return strategy;
  const auto& over = *choice.over;
  auto inner = registry.CreateStrategy(over.component.name, over.component.Params());
  return std::make_shared<ComposedStrategy>(std::move(inner), over.component.name, over.width,
                                            std::move(strategy), choice.component.name);
}

std::vector<std::shared_ptr<const ParallelismStrategy>> CreateRunStrategies(
    const Registry& registry, const std::vector<StrategyChoice>& choices) {
  std::vector<std::shared_ptr<const ParallelismStrategy>> out;
  for (const auto& choice : choices) out.push_back(CreateStrategy(registry, choice));
  return out;
}

}  // namespace phaze
