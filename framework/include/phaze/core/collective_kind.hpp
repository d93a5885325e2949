// The collective operations: what a collective op of a sliced graph does (Operator::collective) and
// what the Network costs (Network::CollectiveS). Strings only at the edges (graph files, CSV).
#pragma once

#include <optional>
#include <string_view>

namespace phaze {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

std::string_view ToString(CollectiveKind kind);  // "all_reduce", "all_gather", …
std::optional<CollectiveKind> ParseCollectiveKind(std::string_view text);

}  // namespace phaze
