#include "phaze/network/network.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>

#include "phaze/core/error.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/core/preset_file.hpp"

namespace phaze {

Network::Network(std::vector<NetworkLevel> levels, std::string name)
    : levels_(std::move(levels)), name_(std::move(name)) {}

Network Network::Flat(double bandwidth_bytes_per_s, double latency_s) {
  return Network({{"link", 0, bandwidth_bytes_per_s, latency_s}}, "flat");
}

Network Network::ParseLevels(const ConfigNode& node) {
  std::vector<NetworkLevel> levels;
  const auto elements = node.Elements();
  if (elements.empty()) node.Fail("expected a non-empty list of network levels, innermost first");
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const ConfigNode& e = elements[i];
    const bool outermost = i + 1 == elements.size();
    e.ExpectKeys({"name", "size", "bandwidth_bytes_per_s", "latency_s", "call_latency_s",
                  "energy_pj_per_bit"});
    NetworkLevel l;
    l.name = e.Child("name").AsString();
    if (auto s = e.Optional("size")) {
      if (outermost) s->Fail("the outermost level joins every device and takes no size");
      l.size = s->AsPositiveInt();
      const std::int64_t inner = levels.empty() ? 1 : levels.back().size;
      if (l.size <= inner || l.size % inner != 0) {
        s->Fail("expected a multiple of the inner level's size " + std::to_string(inner) +
                " larger than it (sizes count devices, cumulatively)");
      }
    } else if (!outermost) {
      e.Fail("missing required key 'size' (devices joined by one group of level '" + l.name +
             "'; only the outermost level has none)");
    }
    l.bandwidth_bytes_per_s = e.Child("bandwidth_bytes_per_s").AsRate(limits::kMinLinkRate, "byte per second");
    if (auto v = e.Optional("latency_s")) l.latency_s = v->AsDuration();
    if (auto v = e.Optional("call_latency_s")) l.call_latency_s = v->AsDuration();
    if (auto v = e.Optional("energy_pj_per_bit")) {
      l.energy_pj_per_bit = v->AsNonNegativeDouble();
      if (l.energy_pj_per_bit > 1e6) v->Fail("expected at most 1e6 pJ per bit");
    }
    for (const auto& prev : levels) {
      if (prev.name == l.name) e.Child("name").Fail("duplicate level name '" + l.name + "'");
    }
    levels.push_back(l);
  }
  return Network(std::move(levels));
}

Network Network::LoadSystem(const std::string& name_or_path) {
  const std::filesystem::path file = FindPresetFile(
      name_or_path, "systems", "system", [](const std::string&) { return true; });
  const ConfigNode root = ConfigNode::ParseFile(file.string());
  root.ExpectKeys({"name", "description", "levels"});
  Network n = ParseLevels(root.Child("levels"));
  n.name_ = root.Optional("name") ? root.Child("name").AsString() : file.stem().string();
  return n;
}

std::string Network::Validate() const {
  if (levels_.empty()) return "the network has no level";
  std::int64_t inner = 1;
  for (std::size_t i = 0; i < levels_.size(); ++i) {
    const auto& l = levels_[i];
    const std::string where = "network level '" + l.name + "': ";
    if (!(l.bandwidth_bytes_per_s > 0) || !std::isfinite(l.bandwidth_bytes_per_s)) {
      return where + "bandwidth_bytes_per_s must be > 0";
    }
    if (!(l.latency_s >= 0) || !std::isfinite(l.latency_s)) return where + "latency_s must be >= 0";
    if (!(l.call_latency_s >= 0) || !std::isfinite(l.call_latency_s)) {
      return where + "call_latency_s must be >= 0";
    }
    if (!(l.energy_pj_per_bit >= 0) || !std::isfinite(l.energy_pj_per_bit)) {
      return where + "energy_pj_per_bit must be >= 0";
    }
    if (i + 1 < levels_.size()) {
      if (l.size <= inner || l.size % inner != 0) {
        return where + "size must be a multiple of the inner level's size larger than it";
      }
      inner = l.size;
    }
  }
  return "";
}

std::vector<double> Network::FanOut(CommGroup g) const {
  std::vector<double> fan(levels_.size());
  FanOutInto(g, fan);
  return fan;
}

void Network::FanOutInto(CommGroup g, std::span<double> fan) const {
  const double n = static_cast<double>(std::max<std::int64_t>(g.size, 1));
  const std::int64_t stride = std::max<std::int64_t>(g.stride, 1);
  double below = 1;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    double members = n;
    if (l + 1 < levels_.size()) {
      members = std::clamp(static_cast<double>((levels_[l].size - 1) / stride + 1), 1.0, n);
    }
    members = std::max(members, below);
    fan[l] = members / below;
    below = members;
  }
}

namespace {

// What one level charges: bytes a device sends are divided by `bytes_per_unit`, each message
// step costs `per_step` and a call crossing the level `per_call` (the largest of the crossed
// levels', once). Time: the bandwidth (a division, so times are bit for bit those of the plain
// formulas) and the latencies; energy: bytes per joule and nothing per step or call.
struct Price {
  double bytes_per_unit = 0;
  double per_step = 0;
  double per_call = 0;
};
// A level's price for time (its bandwidth and latency) and for energy (bytes per joule).
struct TimePrice {
  const std::vector<NetworkLevel>& levels;
  Price operator()(std::size_t l) const {
    return {levels[l].bandwidth_bytes_per_s, levels[l].latency_s, levels[l].call_latency_s};
  }
};
struct EnergyPrice {
  const std::vector<NetworkLevel>& levels;
  Price operator()(std::size_t l) const {
    return {1.0 / (levels[l].energy_pj_per_bit * 8e-12), 0, 0};
  }
};

// One level's ring collective over n members.
double Ring(CollectiveKind kind, double bytes, double n, const Price& l) {
  if (n <= 1 || bytes <= 0) return 0;
  if (kind == CollectiveKind::kAllReduce) {
    return 2.0 * (n - 1) / n * bytes / l.bytes_per_unit + 2 * (n - 1) * l.per_step;
  }
  return (n - 1) / n * bytes / l.bytes_per_unit + (n - 1) * l.per_step;
}

// The hierarchical collective over the levels from `l` outward.
template <class PriceOf>
double Hierarchical(CollectiveKind kind, double bytes, std::span<const double> fan,
                    const PriceOf& price, std::size_t l) {
  while (l < fan.size() && fan[l] <= 1) ++l;  // levels the group does not cross
  if (l >= fan.size()) return 0;
  std::size_t outer = l + 1;
  while (outer < fan.size() && fan[outer] <= 1) ++outer;
  const double n = fan[l];
  if (outer >= fan.size()) return Ring(kind, bytes, n, price(l));
  const double rest = Hierarchical(kind, bytes / n, fan, price, outer);
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return Ring(CollectiveKind::kReduceScatter, bytes, n, price(l)) + rest +
             Ring(CollectiveKind::kAllGather, bytes, n, price(l));
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      return Ring(kind, bytes, n, price(l)) + rest;
    case CollectiveKind::kAllToAll:
      break;  // handled by the caller
  }
  return 0;
}

// The call's fixed cost: the largest per_call of the levels the group crosses.
template <class PriceOf>
double PerCall(std::span<const double> fan, const PriceOf& price) {
  double call = 0;
  for (std::size_t l = 0; l < fan.size(); ++l) {
    if (fan[l] > 1) call = std::max(call, price(l).per_call);
  }
  return call;
}

template <class PriceOf>
double Collective(CollectiveKind kind, double bytes, std::span<const double> fan, std::int64_t size,
                  const PriceOf& price) {
  if (kind != CollectiveKind::kAllToAll) {
    return Hierarchical(kind, bytes, fan, price, 0) + PerCall(fan, price);
  }
  const double per_peer = bytes / static_cast<double>(size);
  double inner = 1, total = 0;
  for (std::size_t l = 0; l < fan.size(); ++l) {
    if (fan[l] <= 1) continue;
    const Price level = price(l);
    total += inner * (fan[l] - 1) * per_peer / level.bytes_per_unit + (fan[l] - 1) * level.per_step;
    inner *= fan[l];
  }
  return total + PerCall(fan, price);
}

}  // namespace

// The fan-out in a buffer on the stack (systems have a few levels; collectives are priced in the
// placement's inner loops, where an allocation per call showed as several percent of a search).
template <class PriceOf>
double Network::Priced(CollectiveKind kind, double bytes, CommGroup group,
                       const PriceOf& price) const {
  constexpr std::size_t kOnStack = 8;
  if (levels_.size() > kOnStack) {
    const std::vector<double> fan = FanOut(group);
    return Collective(kind, bytes, fan, group.size, price);
  }
  std::array<double, kOnStack> buffer;
  const std::span<double> fan(buffer.data(), levels_.size());
  FanOutInto(group, fan);
  return Collective(kind, bytes, std::span<const double>(fan), group.size, price);
}

double Network::CollectiveS(CollectiveKind kind, double bytes, CommGroup group) const {
  if (group.size <= 1 || bytes <= 0) return 0;
  return Priced(kind, bytes, group, TimePrice{levels_});
}

double Network::CollectiveJ(CollectiveKind kind, double bytes, CommGroup group) const {
  if (group.size <= 1 || bytes <= 0) return 0;
  return Priced(kind, bytes, group, EnergyPrice{levels_});
}

double Network::SendJ(double bytes, int level) const {
  return bytes * levels_.at(static_cast<std::size_t>(level)).energy_pj_per_bit * 8e-12;
}

double Network::SendS(double bytes, int level) const {
  const NetworkLevel& l = levels_.at(static_cast<std::size_t>(level));
  return bytes / l.bandwidth_bytes_per_s + l.latency_s;
}

int Network::LevelHolding(std::int64_t ranks) const {
  for (std::size_t l = 0; l + 1 < levels_.size(); ++l) {
    if (ranks <= levels_[l].size) return static_cast<int>(l);
  }
  return static_cast<int>(levels_.size()) - 1;
}

Json Network::ToJson() const {
  Json levels = Json::MakeArray();
  for (const auto& l : levels_) {
    Json j = Json::MakeObject();
    j["name"] = l.name;
    if (l.size > 0) j["size"] = l.size;
    j["bandwidth_bytes_per_s"] = l.bandwidth_bytes_per_s;
    j["latency_s"] = l.latency_s;
    if (l.call_latency_s > 0) j["call_latency_s"] = l.call_latency_s;
    j["energy_pj_per_bit"] = l.energy_pj_per_bit;
    levels.Push(j);
  }
  return levels;
}

}  // namespace phaze
