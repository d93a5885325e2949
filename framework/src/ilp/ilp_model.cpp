#include "phaze/ilp/ilp_model.hpp"

#include <algorithm>
#include <cmath>

#include "phaze/core/error.hpp"

namespace phaze {

namespace {
std::string Num(double v) {
  if (v == kInfinity) return "+inf";
  if (v == -kInfinity) return "-inf";
  return std::to_string(v);
}
}  // namespace

int IlpModel::AddVariable(double lower, double upper, VarType type, std::string name,
                          double objective) {
  int j = NumVariables();
  if (name.empty()) name = "x" + std::to_string(j);
  if (std::isnan(lower) || std::isnan(upper) || lower > upper || lower == kInfinity ||
      upper == -kInfinity) {
    throw InvalidArgumentError("IlpModel: variable '" + name + "' has invalid bounds [" +
                               Num(lower) + ", " + Num(upper) + "]");
  }
  if (type == VarType::kBinary && (lower < 0 || upper > 1)) {
    throw InvalidArgumentError("IlpModel: binary variable '" + name + "' has bounds [" +
                               Num(lower) + ", " + Num(upper) + "] outside [0, 1]");
  }
  if (!std::isfinite(objective)) {
    throw InvalidArgumentError("IlpModel: variable '" + name + "' has a non-finite objective");
  }
  variables_.push_back(IlpVariable{lower, upper, type, objective, std::move(name)});
  return j;
}

void IlpModel::CheckColumn(int j, const std::string& context) const {
  if (j < 0 || j >= NumVariables()) {
    throw InvalidArgumentError("IlpModel: " + context + " refers to variable index " +
                               std::to_string(j) + " but the model has " +
                               std::to_string(NumVariables()) + " variables");
  }
}

int IlpModel::AddRow(double lower, std::span<const int> columns,
                     std::span<const double> coefficients, double upper, std::string name) {
  int r = NumRows();
  if (name.empty()) name = "r" + std::to_string(r);
  if (columns.size() != coefficients.size()) {
    throw InvalidArgumentError("IlpModel: row '" + name + "' has " +
                               std::to_string(columns.size()) + " columns but " +
                               std::to_string(coefficients.size()) + " coefficients");
  }
  if (std::isnan(lower) || std::isnan(upper) || lower > upper || lower == kInfinity ||
      upper == -kInfinity) {
    throw InvalidArgumentError("IlpModel: row '" + name + "' has invalid bounds [" + Num(lower) +
                               ", " + Num(upper) + "]");
  }
  std::vector<std::pair<int, double>> terms;
  terms.reserve(columns.size());
  for (size_t k = 0; k < columns.size(); ++k) {
    CheckColumn(columns[k], "row '" + name + "'");
    if (!std::isfinite(coefficients[k])) {
      throw InvalidArgumentError("IlpModel: row '" + name + "' has a non-finite coefficient for '" +
                                 variables_[columns[k]].name + "'");
    }
    terms.emplace_back(columns[k], coefficients[k]);
  }
  std::sort(terms.begin(), terms.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t k = 0; k < terms.size();) {
    int col = terms[k].first;
    double sum = 0;
    for (; k < terms.size() && terms[k].first == col; ++k) sum += terms[k].second;
    if (sum != 0.0) {
      columns_.push_back(col);
      coefficients_.push_back(sum);
    }
  }
  row_lower_.push_back(lower);
  row_upper_.push_back(upper);
  row_names_.push_back(std::move(name));
  row_starts_.push_back(static_cast<std::int64_t>(columns_.size()));
  return r;
}

int IlpModel::AddRow(double lower, std::initializer_list<std::pair<int, double>> terms,
                     double upper, std::string name) {
  std::vector<int> cols;
  std::vector<double> coefs;
  for (const auto& [c, a] : terms) {
    cols.push_back(c);
    coefs.push_back(a);
  }
  return AddRow(lower, cols, coefs, upper, std::move(name));
}

void IlpModel::SetObjectiveCoefficient(int column, double coefficient) {
  CheckColumn(column, "SetObjectiveCoefficient");
  if (!std::isfinite(coefficient)) {
    throw InvalidArgumentError("IlpModel: non-finite objective coefficient for '" +
                               variables_[column].name + "'");
  }
  variables_[column].objective = coefficient;
}

void IlpModel::SetObjectiveOffset(double offset) {
  if (!std::isfinite(offset)) throw InvalidArgumentError("IlpModel: non-finite objective offset");
  objective_offset_ = offset;
}

int IlpModel::NumIntegral() const {
  return static_cast<int>(std::count_if(variables_.begin(), variables_.end(),
                                        [](const IlpVariable& v) { return v.IsIntegral(); }));
}

const IlpVariable& IlpModel::Variable(int j) const {
  CheckColumn(j, "Variable()");
  return variables_[j];
}

IlpRowView IlpModel::Row(int r) const {
  if (r < 0 || r >= NumRows()) {
    throw InvalidArgumentError("IlpModel: row index " + std::to_string(r) + " out of range (" +
                               std::to_string(NumRows()) + " rows)");
  }
  auto b = static_cast<size_t>(row_starts_[r]);
  auto e = static_cast<size_t>(row_starts_[r + 1]);
  return IlpRowView{row_lower_[r], row_upper_[r],
                    std::span<const int>(columns_.data() + b, e - b),
                    std::span<const double>(coefficients_.data() + b, e - b), row_names_[r]};
}

double IlpModel::Objective(std::span<const double> values) const {
  double obj = objective_offset_;
  for (int j = 0; j < NumVariables() && j < static_cast<int>(values.size()); ++j) {
    obj += variables_[j].objective * values[j];
  }
  return obj;
}

double IlpModel::MaxViolation(std::span<const double> values) const {
  if (static_cast<int>(values.size()) != NumVariables()) return kInfinity;
  double worst = 0;
  for (int j = 0; j < NumVariables(); ++j) {
    const auto& v = variables_[j];
    worst = std::max({worst, v.lower - values[j], values[j] - v.upper});
    if (v.IsIntegral()) worst = std::max(worst, std::fabs(values[j] - std::round(values[j])));
  }
  for (int r = 0; r < NumRows(); ++r) {
    double activity = 0;
    for (auto k = row_starts_[r]; k < row_starts_[r + 1]; ++k) {
      activity += coefficients_[k] * values[columns_[k]];
    }
    worst = std::max({worst, row_lower_[r] - activity, activity - row_upper_[r]});
  }
  return worst;
}

}  // namespace phaze
