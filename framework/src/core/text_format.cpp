#include "phaze/core/text_format.hpp"

#include <fmt/printf.h>

namespace phaze {

std::string FormatNumber(const char* format, double v) { return fmt::sprintf(format, v); }

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    cells.push_back(text.substr(start, comma == std::string::npos ? std::string::npos
                                                                   : comma - start));
    if (comma == std::string::npos) return cells;
    start = comma + 1;
  }
}

}  // namespace phaze
