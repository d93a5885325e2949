#include "phaze/core/collective_kind.hpp"

namespace phaze {

std::string_view ToString(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
  }
  return "?";
}

std::optional<CollectiveKind> ParseCollectiveKind(std::string_view text) {
  for (auto k : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                 CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll}) {
    if (ToString(k) == text) return k;
  }
  return std::nullopt;
}

}  // namespace phaze
