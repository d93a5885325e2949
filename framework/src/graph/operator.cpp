#include "phaze/graph/operator.hpp"

#include <array>
#include <utility>

namespace phaze {

namespace {

constexpr std::array<std::pair<OpKind, std::string_view>, 12> kKindNames = {{
    {OpKind::kGemm, "gemm"},
    {OpKind::kBatchedGemm, "batched_gemm"},
    {OpKind::kElementwise, "elementwise"},
    {OpKind::kNorm, "norm"},
    {OpKind::kSoftmax, "softmax"},
    {OpKind::kDropout, "dropout"},
    {OpKind::kReduction, "reduction"},
    {OpKind::kEmbedding, "embedding"},
    {OpKind::kLoss, "loss"},
    {OpKind::kCollective, "collective"},
    {OpKind::kView, "view"},
    {OpKind::kOptimizer, "optimizer"},
}};

constexpr std::array<std::pair<Axis, std::string_view>, kAxisCount> kAxisNames = {{
    {Axis::kNone, "none"},
    {Axis::kTokens, "tokens"},
    {Axis::kSequences, "sequences"},
    {Axis::kKeys, "keys"},
    {Axis::kHidden, "hidden"},
    {Axis::kHeads, "heads"},
    {Axis::kHeadDim, "head_dim"},
    {Axis::kFfn, "ffn"},
    {Axis::kVocab, "vocab"},
    {Axis::kExperts, "experts"},
}};

template <class Table, class Enum>
std::string_view NameOf(const Table& table, Enum value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";
}

template <class Table>
auto ParseName(const Table& table, std::string_view text)
    -> std::optional<typename Table::value_type::first_type> {
  for (const auto& [v, name] : table) {
    if (name == text) return v;
  }
  return std::nullopt;
}

template <class Table>
std::vector<std::string> NamesOf(const Table& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(entry.second);
  return out;
}

}  // namespace

std::string_view ToString(OpKind kind) { return NameOf(kKindNames, kind); }
std::string_view ToString(Axis axis) { return NameOf(kAxisNames, axis); }
std::string_view ToString(CoreClass core) {
  switch (core) {
    case CoreClass::kTensor:
      return "tensor";
    case CoreClass::kVector:
      return "vector";
    case CoreClass::kFused:
      return "fused";
    case CoreClass::kNone:
      return "none";
  }
  return "?";
}
std::optional<OpKind> ParseOpKind(std::string_view text) { return ParseName(kKindNames, text); }
std::optional<Axis> ParseAxis(std::string_view text) { return ParseName(kAxisNames, text); }
std::vector<std::string> OpKindNames() { return NamesOf(kKindNames); }
std::vector<std::string> AxisNames() { return NamesOf(kAxisNames); }

CoreClass Operator::Core() const {
  if (gemm) return vector.empty() ? CoreClass::kTensor : CoreClass::kFused;
  return vector.empty() ? CoreClass::kNone : CoreClass::kVector;
}

std::int64_t Operator::VectorElements() const {
  std::int64_t total = 0;
  for (const auto& w : vector) total += w.elements;
  return total;
}

}  // namespace phaze
