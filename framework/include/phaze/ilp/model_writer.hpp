// Export of an IlpModel for debugging, readable by the `cbc` and `lp_solve` command-line tools:
// free MPS (`cbc model.mps solve`, `lp_solve -fmps model.mps`) and CPLEX LP (`cbc model.lp solve`).
// Every variable gets explicit bounds (MPS readers disagree on integer defaults); the objective
// offset is a fixed variable `_offset` (readers disagree on the sign of an objective-row RHS); in
// MPS a maximisation is written as minimising the negated objective (CBC ignores OBJSENSE), so
// the tools report −optimum for it. LP files keep "Maximize".
#pragma once

#include <string>

#include "phaze/ilp/ilp_model.hpp"

namespace phaze {

std::string ToMps(const IlpModel& model);
std::string ToLp(const IlpModel& model);
// Writes ToMps or ToLp depending on the extension (".mps" or ".lp"); throws phaze::Error when the
// extension is neither or the file cannot be written.
void WriteModel(const IlpModel& model, const std::string& path);

}  // namespace phaze
