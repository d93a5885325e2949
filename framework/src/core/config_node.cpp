#include "phaze/core/config_node.hpp"

#include <fmt/printf.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/core/json.hpp"

namespace phaze {

// A node plus the mark to report when it is absent (its parent's).
struct ConfigNode::Impl {
  YAML::Node node;
  YAML::Mark fallback_mark;
};

namespace {

std::string MarkText(const YAML::Mark& m) {
  if (m.line < 0) return "?:?";
  return std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

std::string JoinPath(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  return parent + "." + std::string(key);
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ", ";
    out += names[i];
  }
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// Refuses a document that, once its aliases are followed, has more than limits::kDocumentNodes
// nodes or nests deeper than limits::kDocumentDepth: every reader walks aliases as copies, so a
// few lines of anchors ("billion laughs") would otherwise hang it or exhaust memory. The walk stops
// at the first node over the limit, so it costs at most kDocumentNodes steps.
void CheckDocumentSize(const YAML::Node& root, const std::string& source) {
  std::vector<std::pair<YAML::Node, int>> stack{{root, 0}};
  std::int64_t nodes = 0;
  while (!stack.empty()) {
    const YAML::Node node = std::move(stack.back().first);
    const int depth = stack.back().second;
    stack.pop_back();
    auto fail = [&](const std::string& why) {
      throw ConfigError(source + ":" + MarkText(node.Mark()) + ": " + why +
                        " (phaze's limit: see share/config/README.md, Limits)");
    };
    if (++nodes > limits::kDocumentNodes) {
      fail("the document expands to more than " + std::to_string(limits::kDocumentNodes) +
           " nodes once its aliases are followed");
    }
    if (depth > limits::kDocumentDepth) {
      fail("maps and sequences nest deeper than " + std::to_string(limits::kDocumentDepth) +
           " levels");
    }
    if (node.IsSequence()) {
      for (const auto& child : node) stack.emplace_back(child, depth + 1);
    } else if (node.IsMap()) {
      for (const auto& kv : node) {
        stack.emplace_back(kv.first, depth + 1);
        stack.emplace_back(kv.second, depth + 1);
      }
    }
  }
}

}  // namespace

std::optional<std::string> DidYouMean(std::string_view word,
                                      const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

ConfigNode::ConfigNode(std::shared_ptr<const Impl> impl, std::string path, std::string source)
    : impl_(std::move(impl)), path_(std::move(path)), source_(std::move(source)) {}
ConfigNode::ConfigNode(const ConfigNode&) = default;
ConfigNode& ConfigNode::operator=(const ConfigNode&) = default;
ConfigNode::ConfigNode(ConfigNode&&) noexcept = default;
ConfigNode& ConfigNode::operator=(ConfigNode&&) noexcept = default;
ConfigNode::~ConfigNode() = default;

ConfigNode ConfigNode::ParseString(const std::string& text, const std::string& source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(source_name + ":" + MarkText(e.mark) + ": syntax error: " + e.msg);
  }
  CheckDocumentSize(root, source_name);
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  auto impl = std::make_shared<Impl>(Impl{root, YAML::Mark()});
  impl->fallback_mark.line = 0;
  impl->fallback_mark.column = 0;
  return ConfigNode(std::move(impl), "", source_name);
}

ConfigNode ConfigNode::ParseFile(const std::string& path) {
  return ParseString(ReadInputFile(path), path);
}

ConfigNode ConfigNode::EmptyMap(const std::string& source_name, const std::string& path) {
  auto impl = std::make_shared<Impl>(Impl{YAML::Node(YAML::NodeType::Map), YAML::Mark()});
  return ConfigNode(std::move(impl), path, source_name);
}

ConfigNode ConfigNode::Make(std::string path, const YAML::Node& node,
                            const YAML::Node* parent) const {
  YAML::Mark fallback = parent && parent->Mark().line >= 0 ? parent->Mark() : impl_->fallback_mark;
  return ConfigNode(std::make_shared<Impl>(Impl{node, fallback}), std::move(path), source_);
}

std::string ConfigNode::Location() const {
  YAML::Mark m = impl_->node.IsDefined() ? impl_->node.Mark() : impl_->fallback_mark;
  if (m.line < 0) m = impl_->fallback_mark;
  return source_ + ":" + MarkText(m);
}

std::string ConfigNode::Where() const {
  return path_.empty() ? Location() : Location() + ": " + path_;
}

void ConfigNode::Fail(std::string_view message) const {
  throw ConfigError(Where() + ": " + std::string(message));
}

bool ConfigNode::IsMap() const { return impl_->node.IsMap(); }
bool ConfigNode::IsSequence() const { return impl_->node.IsSequence(); }
bool ConfigNode::IsScalar() const { return impl_->node.IsScalar(); }
bool ConfigNode::IsNull() const { return !impl_->node.IsDefined() || impl_->node.IsNull(); }

std::string ConfigNode::Describe() const {
  if (IsNull()) return "nothing (null)";
  if (IsMap()) return "a map";
  if (IsSequence()) return "a sequence";
  return "'" + impl_->node.Scalar() + "'";
}

bool ConfigNode::Has(std::string_view key) const {
  if (!IsMap()) return false;
  const YAML::Node& n = impl_->node;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return true;
  }
  return false;
}

std::optional<ConfigNode> ConfigNode::Optional(std::string_view key) const {
  if (IsNull()) return std::nullopt;
  if (!IsMap()) Fail("expected a map, found " + Describe());
  const YAML::Node& n = impl_->node;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      if (it->second.IsNull()) return std::nullopt;  // "key:" with no value counts as absent
      return Make(JoinPath(path_, key), it->second, &n);
    }
  }
  return std::nullopt;
}

ConfigNode ConfigNode::Child(std::string_view key) const {
  if (auto c = Optional(key)) return *c;
  Fail("missing required key '" + std::string(key) + "'");
}

std::vector<std::pair<std::string, ConfigNode>> ConfigNode::Entries() const {
  if (!IsMap()) Fail("expected a map, found " + Describe());
  std::vector<std::pair<std::string, ConfigNode>> out;
  const YAML::Node& n = impl_->node;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
    out.emplace_back(key, Make(JoinPath(path_, key), it->second, &n));
  }
  return out;
}

std::vector<ConfigNode> ConfigNode::Elements() const {
  if (!IsSequence()) Fail("expected a sequence (a YAML list), found " + Describe());
  std::vector<ConfigNode> out;
  const YAML::Node& n = impl_->node;
  size_t i = 0;
  for (auto it = n.begin(); it != n.end(); ++it, ++i) {
    out.push_back(Make(path_ + "[" + std::to_string(i) + "]", *it, &n));
  }
  return out;
}

void ConfigNode::ExpectKeys(const std::vector<std::string>& allowed) const {
  if (!IsMap()) Fail("expected a map, found " + Describe());
  std::vector<std::string> seen;
  const YAML::Node& n = impl_->node;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    ConfigNode key_node(std::make_shared<Impl>(Impl{it->first, n.Mark()}), JoinPath(path_, key),
                        source_);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string msg = "unknown key '" + key + "'";
      if (auto guess = DidYouMean(key, allowed)) msg += "; did you mean '" + *guess + "'?";
      msg += " (allowed keys: " + JoinNames(allowed) + ")";
      key_node.Fail(msg);
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      key_node.Fail("duplicate key '" + key + "'");
    }
    seen.push_back(key);
  }
}

void ConfigNode::ExpectKeys(std::initializer_list<std::string_view> allowed) const {
  std::vector<std::string> v;
  for (auto a : allowed) v.emplace_back(a);
  ExpectKeys(v);
}

std::string ConfigNode::ScalarText() const {
  if (IsNull()) Fail("expected a value, found nothing (null)");
  if (!IsScalar()) Fail("expected a single value, found " + Describe());
  return impl_->node.Scalar();
}

std::string ConfigNode::AsString() const { return ScalarText(); }

bool ConfigNode::AsBool() const {
  std::string s = ScalarText();
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  Fail("expected true or false, found '" + s + "'");
}

double ConfigNode::AsDouble() const {
  std::string s = ScalarText();
  double v = 0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (!s.empty() && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) {
    Fail("expected a number, found '" + s + "'");
  }
  return v;
}

std::int64_t ConfigNode::AsInt() const {
  std::string s = ScalarText();
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && ptr == s.data() + s.size()) return v;
  double d = 0;
  auto [p2, e2] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (e2 == std::errc() && p2 == s.data() + s.size() && std::isfinite(d) && d == std::floor(d) &&
      std::fabs(d) < 9.0e18) {
    return static_cast<std::int64_t>(d);
  }
  Fail("expected an integer, found '" + s + "'");
}

std::int64_t ConfigNode::AsPositiveInt() const {
  std::int64_t v = AsInt();
  if (v < 1) Fail("expected a positive integer (>= 1), found " + std::to_string(v));
  return v;
}

std::int64_t ConfigNode::AsIntInRange(std::int64_t lo, std::int64_t hi) const {
  std::int64_t v = AsInt();
  if (v < lo || v > hi) {
    Fail("expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
         "], found " + std::to_string(v) + (v > hi ? " (phaze's limit: see share/config/README.md, Limits)" : ""));
  }
  return v;
}

double ConfigNode::AsPositiveDouble() const {
  double v = AsDouble();
  if (!(v > 0)) Fail("expected a positive number (> 0), found " + ScalarText());
  return v;
}

double ConfigNode::AsNonNegativeDouble() const {
  double v = AsDouble();
  if (v < 0) Fail("expected a non-negative number (>= 0), found " + ScalarText());
  return v;
}

double ConfigNode::AsRate(double minimum, const std::string& unit) const {
  const double v = AsPositiveDouble();
  if (v < minimum) Fail(fmt::sprintf("expected at least %g %s, found %s", minimum, unit, ScalarText()));
  return v;
}

double ConfigNode::AsDuration() const {
  const double v = AsNonNegativeDouble();
  if (v > limits::kDurationSeconds) {
    Fail("expected at most 1e9 seconds (about 32 years; longer ones overflow the sums built on "
         "them), found " + ScalarText());
  }
  return v;
}

std::string ConfigNode::AsChoice(std::initializer_list<std::string_view> choices) const {
  return AsChoice(std::vector<std::string>(choices.begin(), choices.end()));
}

std::string ConfigNode::AsChoice(const std::vector<std::string>& names) const {
  std::string s = ScalarText();
  for (const auto& c : names) {
    if (s == c) return s;
  }
  std::string msg = "expected one of " + JoinNames(names) + "; found '" + s + "'";
  if (auto guess = DidYouMean(s, names)) msg += " (did you mean '" + *guess + "'?)";
  Fail(msg);
}

Json ConfigNode::ToJson() const {
  if (IsNull()) return Json();
  if (IsMap()) {
    Json out = Json::MakeObject();
    for (auto& [k, v] : Entries()) out[k] = v.ToJson();
    return out;
  }
  if (IsSequence()) {
    Json out = Json::MakeArray();
    for (auto& e : Elements()) out.Push(e.ToJson());
    return out;
  }
  const std::string& s = impl_->node.Scalar();
  if (impl_->node.Tag() == "!") return Json(s);  // explicitly quoted in the document
  if (s == "true") return Json(true);
  if (s == "false") return Json(false);
  std::int64_t i = 0;
  auto [p, e] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (e == std::errc() && p == s.data() + s.size()) return Json(static_cast<long long>(i));
  double d = 0;
  auto [p2, e2] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (e2 == std::errc() && p2 == s.data() + s.size()) return Json(d);
  return Json(s);
}

}  // namespace phaze
