// A strategy planned at some of its widths only: `phaze plan --context-parallel` composes context
// parallelism c over tensor parallelism k and asks for the composition at t = k·c alone, and the
// widths it adds to the sweep for that are not asked of the other strategies. Refusal says so for
// any other width ("not planned at t = …: `why`"); otherwise the wrapped strategy decides, and
// slices.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "phaze/strategy/parallelism_strategy.hpp"

namespace phaze {

class WidthRestrictedStrategy : public ParallelismStrategy {
 public:
  // `why`: which flag or setting leaves the other widths out (in the refusal).
  WidthRestrictedStrategy(std::shared_ptr<const ParallelismStrategy> strategy,
                          std::vector<std::int64_t> widths, std::string why);
  std::string Refusal(const LayerGraph& full, std::int64_t width) const override;
  LayerGraph Slice(const LayerGraph& full, std::int64_t width) const override;

 private:
  std::shared_ptr<const ParallelismStrategy> strategy_;
  std::vector<std::int64_t> widths_;
  std::string why_;
};

}  // namespace phaze
