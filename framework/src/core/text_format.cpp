#include "phaze/core/text_format.hpp"

#include <fmt/printf.h>

namespace phaze {

std::string FormatNumber(const char* format, double v) { return fmt::sprintf(format, v); }

}  // namespace phaze
