// Cycles per element per vector lane of each vector function, shared by the estimators that cost
// vector work by its arithmetic (the `analytic` and `device` models): GELU via erf (~15),
// tanh-GELU = tanh (27) + 5 multiply-adds, SiLU = sigmoid (12) + 1, softmax = exp (15) + sum +
// divide (10), norms = two passes plus a normalise, Adam = moments, sqrt (15), divide (10).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace phaze {

const std::map<std::string, double>& VectorCyclesPerElement();

// The table's cycles of `function`, or nullptr when it has none: a hashed lookup, as every
// estimate asks it of each of its op's vector functions.
const double* FindVectorCycles(std::string_view function);

// The cycles of `function`: `overrides` first, then the table; an UnsupportedOpError naming the
// estimator, the op and the known functions otherwise.
double VectorCycles(const std::string& estimator, const std::string& op_name,
                    const std::string& function, const std::map<std::string, double>& overrides);

}  // namespace phaze
