// The config layer: a read-only view of a YAML (or JSON) document that knows where each value came
// from. Every read of user input goes through ConfigNode so that errors read
//   FILE:LINE:COL: key.path: expected <what>, found <what>
// and unknown keys are rejected with a did-you-mean. Never call YAML::Node::as<T>() elsewhere
// (yaml-cpp 0.7 reports a missing key as a location-less "bad conversion").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "phaze/core/error.hpp"

namespace YAML {
class Node;
}

namespace phaze {

class Json;

class ConfigNode {
 public:
  // Parses a file; a syntax error or unreadable file throws ConfigError with the location.
  static ConfigNode ParseFile(const std::string& path);
  // Parses text; `source_name` stands in for the file name in messages.
  static ConfigNode ParseString(const std::string& text, const std::string& source_name);
  // An empty map at `path` (used for absent optional `params:` sections).
  static ConfigNode EmptyMap(const std::string& source_name, const std::string& path);

  ConfigNode(const ConfigNode&);
  ConfigNode& operator=(const ConfigNode&);
  ConfigNode(ConfigNode&&) noexcept;
  ConfigNode& operator=(ConfigNode&&) noexcept;
  ~ConfigNode();

  // Dotted key path from the document root ("solver.backend", "models[2].file"); "" for the root.
  const std::string& Path() const { return path_; }
  const std::string& Source() const { return source_; }
  // "FILE:LINE:COL" (1-based) of this value, or of its parent map when the key is absent.
  std::string Location() const;
  // "FILE:LINE:COL: key.path" — the prefix of every message about this value.
  std::string Where() const;
  // Throws ConfigError("FILE:LINE:COL: key.path: <message>").
  [[noreturn]] void Fail(std::string_view message) const;

  bool IsMap() const;
  bool IsSequence() const;
  bool IsScalar() const;
  bool IsNull() const;
  // "a map", "a sequence", "'text'" (scalars quoted), "null" — for "found ..." messages.
  std::string Describe() const;

  // Map access. Child() fails with "missing required key 'k'" at this node's location.
  bool Has(std::string_view key) const;
  ConfigNode Child(std::string_view key) const;
  std::optional<ConfigNode> Optional(std::string_view key) const;
  // Map entries in document order.
  std::vector<std::pair<std::string, ConfigNode>> Entries() const;
  // Sequence elements (a scalar is *not* promoted to a one-element list).
  std::vector<ConfigNode> Elements() const;

  // Rejects keys not in `allowed` ("unknown key 'x'; did you mean 'y'?  allowed keys: ...") and
  // duplicate keys. Fails if this is not a map.
  void ExpectKeys(std::initializer_list<std::string_view> allowed) const;
  void ExpectKeys(const std::vector<std::string>& allowed) const;

  // Typed scalar reads with located errors.
  std::string AsString() const;
  bool AsBool() const;
  double AsDouble() const;           // any finite number
  std::int64_t AsInt() const;        // an integer (1e9 accepted when exactly integral)
  std::int64_t AsPositiveInt() const;   // ≥ 1
  // In [lo, hi], else "expected an integer in [lo, hi], found v" (hi: phaze's limit for the key,
  // phaze/core/limits.hpp).
  std::int64_t AsIntInRange(std::int64_t lo, std::int64_t hi) const;
  double AsPositiveDouble() const;      // > 0
  double AsNonNegativeDouble() const;   // ≥ 0
  // Physical limits (phaze/core/limits.hpp), so every time derived from the value stays finite:
  // a rate of at least `minimum` (limits::kMinRate, kMinLinkRate; `unit` names it in the
  // message), a duration in [0, kDurationSeconds] (1e9 s).
  double AsRate(double minimum, const std::string& unit) const;
  double AsDuration() const;
  template <class T>
  std::vector<T> AsList(T (ConfigNode::*read)() const) const {
    std::vector<T> out;
    for (const auto& e : Elements()) out.push_back((e.*read)());
    return out;
  }
  // One of `choices`, else "expected one of a, b, c; found 'x'".
  std::string AsChoice(std::initializer_list<std::string_view> choices) const;
  std::string AsChoice(const std::vector<std::string>& choices) const;
  // One of `choices` by its word (the enum's ToString, found by ADL); "expected one of …" else.
  template <class Enum>
  Enum AsEnum(std::initializer_list<Enum> choices) const {
    std::vector<std::string> words;
    for (Enum e : choices) words.emplace_back(ToString(e));
    const std::string word = AsChoice(words);
    for (Enum e : choices) {
      if (ToString(e) == word) return e;
    }
    return *choices.begin();  // unreachable: AsChoice accepted one of the words
  }

  // The value as JSON (scalars typed by their text: int, double, bool, null or string).
  Json ToJson() const;

 private:
  struct Impl;
  ConfigNode(std::shared_ptr<const Impl> impl, std::string path, std::string source);
  std::string ScalarText() const;
  ConfigNode Make(std::string path, const YAML::Node& node, const YAML::Node* parent) const;

  std::shared_ptr<const Impl> impl_;
  std::string path_;
  std::string source_;
};

// Runs `load`, which reads a file that `origin` names (a model, space or preset of a run config).
// A ConfigError from it — the file is missing, or wrong inside — gets "\n  (named at FILE:L:C:
// key)" appended, so the message also points at the line that named the file.
template <class Load>
decltype(auto) LoadNamed(const std::optional<ConfigNode>& origin, Load&& load);

// Levenshtein-closest of `candidates` to `word`, if close enough to be a plausible typo.
std::optional<std::string> DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

template <class Load>
decltype(auto) LoadNamed(const std::optional<ConfigNode>& origin, Load&& load) {
  try {
    return load();
  } catch (const ConfigError& e) {
    if (!origin) throw;
    throw ConfigError(std::string(e.what()) + "\n  (named at " + origin->Where() + ")");
  }
}

}  // namespace phaze
