#include "phaze/network/network.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "phaze/core/error.hpp"
#include "phaze/config/preset_file.hpp"

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
    e.ExpectKeys({"name", "size", "bandwidth_bytes_per_s", "latency_s"});
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
    l.bandwidth_bytes_per_s = e.Child("bandwidth_bytes_per_s").AsPositiveDouble();
    if (auto v = e.Optional("latency_s")) l.latency_s = v->AsNonNegativeDouble();
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
  std::vector<double> fan(levels_.size(), 1.0);
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
  return fan;
}

namespace {

// One level's ring collective over n members.
double RingS(CollectiveKind kind, double bytes, double n, const NetworkLevel& l) {
  if (n <= 1 || bytes <= 0) return 0;
  if (kind == CollectiveKind::kAllReduce) {
    return 2.0 * (n - 1) / n * bytes / l.bandwidth_bytes_per_s + 2 * (n - 1) * l.latency_s;
  }
  return (n - 1) / n * bytes / l.bandwidth_bytes_per_s + (n - 1) * l.latency_s;
}

// The hierarchical collective over the levels from `l` outward.
double Hierarchical(CollectiveKind kind, double bytes, const std::vector<double>& fan,
                    const std::vector<NetworkLevel>& levels, std::size_t l) {
  while (l < levels.size() && fan[l] <= 1) ++l;  // levels the group does not cross
  if (l >= levels.size()) return 0;
  std::size_t outer = l + 1;
  while (outer < levels.size() && fan[outer] <= 1) ++outer;
  const double n = fan[l];
  if (outer >= levels.size()) return RingS(kind, bytes, n, levels[l]);
  const double rest = Hierarchical(kind, bytes / n, fan, levels, outer);
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return RingS(CollectiveKind::kReduceScatter, bytes, n, levels[l]) + rest +
             RingS(CollectiveKind::kAllGather, bytes, n, levels[l]);
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      return RingS(kind, bytes, n, levels[l]) + rest;
    case CollectiveKind::kAllToAll:
      break;  // handled by the caller
  }
  return 0;
}

}  // namespace

double Network::CollectiveS(CollectiveKind kind, double bytes, CommGroup group) const {
  if (group.size <= 1 || bytes <= 0) return 0;
  const std::vector<double> fan = FanOut(group);
  if (kind != CollectiveKind::kAllToAll) return Hierarchical(kind, bytes, fan, levels_, 0);
  const double per_peer = bytes / static_cast<double>(group.size);
  double inner = 1, total = 0;
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    if (fan[l] <= 1) continue;
    const NetworkLevel& lv = levels_[l];
    total += inner * (fan[l] - 1) * per_peer / lv.bandwidth_bytes_per_s + (fan[l] - 1) * lv.latency_s;
    inner *= fan[l];
  }
  return total;
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
    levels.Push(j);
  }
  return levels;
}

}  // namespace phaze
