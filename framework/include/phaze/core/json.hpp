// A small JSON value with ordered objects and a deterministic writer: the same value always
// serialises to the same bytes (numbers in shortest round-trip form). Used for every JSON output
// of Phaze (results, plugin listings, solver dumps). JSON *input* goes through the config layer
// (yaml-cpp parses JSON), which gives located errors.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace phaze {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;  // insertion order is output order

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool v) : value_(v) {}
  Json(int v) : value_(static_cast<std::int64_t>(v)) {}
  Json(long v) : value_(static_cast<std::int64_t>(v)) {}
  Json(long long v) : value_(static_cast<std::int64_t>(v)) {}
  Json(unsigned v) : value_(static_cast<std::int64_t>(v)) {}
  Json(unsigned long v) : value_(static_cast<std::int64_t>(v)) {}
  Json(unsigned long long v) : value_(static_cast<std::int64_t>(v)) {}
  Json(double v) : value_(v) {}
  Json(const char* v) : value_(std::string(v)) {}
  Json(std::string v) : value_(std::move(v)) {}
  Json(std::string_view v) : value_(std::string(v)) {}
  Json(Array v) : value_(std::move(v)) {}
  Json(Object v) : value_(std::move(v)) {}

  static Json MakeArray() { return Json(Array{}); }
  static Json MakeObject() { return Json(Object{}); }

  bool IsNull() const { return std::holds_alternative<std::monostate>(value_); }
  bool IsObject() const { return std::holds_alternative<Object>(value_); }
  bool IsArray() const { return std::holds_alternative<Array>(value_); }

  // Object access: sets (replacing an existing key in place) or appends the key.
  Json& operator[](std::string_view key);
  // Returns nullptr when absent or not an object.
  const Json* Find(std::string_view key) const;
  // Array append (turns null into an array).
  void Push(Json v);

  const Object& AsObject() const { return std::get<Object>(value_); }
  const Array& AsArray() const { return std::get<Array>(value_); }
  double AsDouble() const;
  const std::string& AsString() const { return std::get<std::string>(value_); }

  // indent < 0: compact one line; otherwise pretty-printed with that many spaces. A non-finite
  // double is written as null (JSON has no inf or nan); FirstNonFinite finds one before that.
  std::string Dump(int indent = 2) const;
  // The path of the first non-finite double, e.g. "result.plan.stages[3].load_s"; empty when every
  // number is finite. `prefix` starts the path.
  std::string FirstNonFinite(const std::string& prefix = "") const;
  // Appends Dump(indent)'s text as it reads `depth` levels deep inside another value (for a
  // writer that streams a large array element by element).
  void DumpTo(std::string& out, int indent, int depth) const;

 private:
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Array, Object> value_;
};

// Escapes a string for inclusion in JSON (without the surrounding quotes).
std::string JsonEscape(std::string_view s);
// Shortest round-trip decimal form of a double; non-finite values become null in Dump.
std::string FormatDouble(double v);

}  // namespace phaze
