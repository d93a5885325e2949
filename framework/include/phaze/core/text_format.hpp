// printf-style formatting of one number into a std::string, for reports and plots.
#pragma once

#include <string>
#include <vector>

namespace phaze {

// FormatNumber("%.2f", 3.14159) == "3.14". The format takes exactly one double.
std::string FormatNumber(const char* format, double v);

// Every cell of a comma-separated list, empty ones included: "" and "1," have one and two.
std::vector<std::string> SplitCommas(const std::string& text);

}  // namespace phaze
