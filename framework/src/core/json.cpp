#include "phaze/core/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fmt/printf.h>

namespace phaze {

Json& Json::operator[](std::string_view key) {
  if (IsNull()) value_ = Object{};
  auto& obj = std::get<Object>(value_);
  for (auto& [k, v] : obj) {
    if (k == key) return v;
  }
  obj.emplace_back(std::string(key), Json());
  return obj.back().second;
}

const Json* Json::Find(std::string_view key) const {
  if (!IsObject()) return nullptr;
  for (const auto& [k, v] : AsObject()) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Json::Push(Json v) {
  if (IsNull()) value_ = Array{};
  std::get<Array>(value_).push_back(std::move(v));
}

double Json::AsDouble() const {
  if (const auto* i = std::get_if<std::int64_t>(&value_)) return static_cast<double>(*i);
  return std::get<double>(value_);
}

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          std::string buf = fmt::sprintf("\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string FormatDouble(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  return s;
}

void Json::DumpTo(std::string& out, int indent, int depth) const {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  if (IsNull()) {
    out += "null";
  } else if (const auto* b = std::get_if<bool>(&value_)) {
    out += *b ? "true" : "false";
  } else if (const auto* i = std::get_if<std::int64_t>(&value_)) {
    out += std::to_string(*i);
  } else if (const auto* d = std::get_if<double>(&value_)) {
    out += FormatDouble(*d);
  } else if (const auto* s = std::get_if<std::string>(&value_)) {
    out += '"';
    out += JsonEscape(*s);
    out += '"';
  } else if (const auto* a = std::get_if<Array>(&value_)) {
    if (a->empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t k = 0; k < a->size(); ++k) {
      if (k) out += ',';
      newline(depth + 1);
      (*a)[k].DumpTo(out, indent, depth + 1);
    }
    newline(depth);
    out += ']';
  } else {
    const auto& o = std::get<Object>(value_);
    if (o.empty()) {
      out += "{}";
      return;
    }
    out += '{';
    for (size_t k = 0; k < o.size(); ++k) {
      if (k) out += ',';
      newline(depth + 1);
      out += '"';
      out += JsonEscape(o[k].first);
      out += indent < 0 ? "\":" : "\": ";
      o[k].second.DumpTo(out, indent, depth + 1);
    }
    newline(depth);
    out += '}';
  }
}

std::string Json::FirstNonFinite(const std::string& prefix) const {
  if (const auto* d = std::get_if<double>(&value_)) return std::isfinite(*d) ? "" : prefix;
  if (const auto* a = std::get_if<Array>(&value_)) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      std::string at = (*a)[i].FirstNonFinite(prefix + "[" + std::to_string(i) + "]");
      if (!at.empty()) return at;
    }
  }
  if (const auto* o = std::get_if<Object>(&value_)) {
    for (const auto& [k, v] : *o) {
      std::string at = v.FirstNonFinite(prefix.empty() ? k : prefix + "." + k);
      if (!at.empty()) return at;
    }
  }
  return "";
}

std::string Json::Dump(int indent) const {
  std::string out;
  DumpTo(out, indent, 0);
  return out;
}

}  // namespace phaze
