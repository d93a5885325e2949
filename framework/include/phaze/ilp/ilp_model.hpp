// A solver-neutral mixed-integer linear program: variables with bounds and integrality, rows
// lb ≤ Σ a_j x_j ≤ ub (equalities and one-sided rows as special cases, ±infinity for no bound), a
// linear objective with a constant offset, minimise or maximise. The scheduler builds these and a
// SolverBackend plugin solves them. Rows are stored in one compressed-row array, so models of 10^5
// rows are cheap to build; every Add* validates its input and throws InvalidArgumentError naming
// the variable or row.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace phaze {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

enum class VarType { kContinuous, kInteger, kBinary };
enum class ObjectiveSense { kMinimize, kMaximize };

struct IlpVariable {
  double lower;
  double upper;
  VarType type;
  double objective;  // coefficient in the objective
  std::string name;
  bool IsIntegral() const { return type != VarType::kContinuous; }
};

struct IlpRowView {
  double lower;
  double upper;
  std::span<const int> columns;
  std::span<const double> coefficients;
  const std::string& name;
};

class IlpModel {
 public:
  // Adds a variable; returns its index. Binary variables must have bounds within [0, 1].
  // An empty name becomes "x<index>".
  int AddVariable(double lower, double upper, VarType type, std::string name = "",
                  double objective = 0.0);
  int AddContinuous(double lower, double upper, std::string name = "") {
    return AddVariable(lower, upper, VarType::kContinuous, std::move(name));
  }
  int AddBinary(std::string name = "") {
    return AddVariable(0, 1, VarType::kBinary, std::move(name));
  }

  // Adds lower ≤ Σ coefficients[k]·x[columns[k]] ≤ upper; returns the row index. Repeated columns
  // are summed; zero coefficients dropped. An empty name becomes "r<index>".
  int AddRow(double lower, std::span<const int> columns, std::span<const double> coefficients,
             double upper, std::string name = "");
  int AddRow(double lower, std::initializer_list<std::pair<int, double>> terms, double upper,
             std::string name = "");

  void SetObjectiveCoefficient(int column, double coefficient);
  void SetObjectiveOffset(double offset);
  void SetSense(ObjectiveSense sense) { sense_ = sense; }

  int NumVariables() const { return static_cast<int>(variables_.size()); }
  int NumRows() const { return static_cast<int>(row_lower_.size()); }
  std::int64_t NumNonzeros() const { return static_cast<std::int64_t>(columns_.size()); }
  int NumIntegral() const;
  const IlpVariable& Variable(int j) const;
  const std::vector<IlpVariable>& Variables() const { return variables_; }
  IlpRowView Row(int r) const;
  double ObjectiveOffset() const { return objective_offset_; }
  ObjectiveSense Sense() const { return sense_; }
  const std::string& Name() const { return name_; }
  void SetName(std::string name) { name_ = std::move(name); }

  // Objective value (offset included) and maximum violation of bounds, rows and integrality.
  double Objective(std::span<const double> values) const;
  double MaxViolation(std::span<const double> values) const;

  // Compressed-row arrays (row_starts has NumRows()+1 entries), for backends.
  const std::vector<std::int64_t>& RowStarts() const { return row_starts_; }
  const std::vector<int>& Columns() const { return columns_; }
  const std::vector<double>& Coefficients() const { return coefficients_; }
  const std::vector<double>& RowLower() const { return row_lower_; }
  const std::vector<double>& RowUpper() const { return row_upper_; }

 private:
  void CheckColumn(int j, const std::string& context) const;

  std::string name_ = "phaze";
  std::vector<IlpVariable> variables_;
  std::vector<double> row_lower_, row_upper_;
  std::vector<std::string> row_names_;
  std::vector<std::int64_t> row_starts_{0};
  std::vector<int> columns_;
  std::vector<double> coefficients_;
  double objective_offset_ = 0.0;
  ObjectiveSense sense_ = ObjectiveSense::kMinimize;
};

}  // namespace phaze
