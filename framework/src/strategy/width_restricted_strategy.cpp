#include "phaze/strategy/width_restricted_strategy.hpp"

#include <algorithm>
#include <utility>

namespace phaze {

WidthRestrictedStrategy::WidthRestrictedStrategy(
    std::shared_ptr<const ParallelismStrategy> strategy, std::vector<std::int64_t> widths,
    std::string why)
    : strategy_(std::move(strategy)), widths_(std::move(widths)), why_(std::move(why)) {}

std::string WidthRestrictedStrategy::Refusal(const LayerGraph& full, std::int64_t width) const {
  if (std::find(widths_.begin(), widths_.end(), width) == widths_.end()) {
    return "not planned at t = " + std::to_string(width) + ": " + why_;
  }
  return strategy_->Refusal(full, width);
}

LayerGraph WidthRestrictedStrategy::Slice(const LayerGraph& full, std::int64_t width) const {
  return strategy_->Slice(full, width);
}

}  // namespace phaze
