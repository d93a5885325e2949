// Text for SVG/XML output: escapes the characters that would break markup.
#pragma once

#include <string>
#include <string_view>

namespace phaze {

// "<a & b>" → "&lt;a &amp; b&gt;" (also escapes '"').
inline std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace phaze
