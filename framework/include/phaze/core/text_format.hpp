// printf-style formatting of one number into a std::string, for reports and plots.
#pragma once

#include <string>

namespace phaze {

// FormatNumber("%.2f", 3.14159) == "3.14". The format takes exactly one double.
std::string FormatNumber(const char* format, double v);

}  // namespace phaze
