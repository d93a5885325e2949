#include "phaze/ilp/ilp_model.hpp"

#include <gtest/gtest.h>

#include "phaze/core/error.hpp"
#include "phaze/ilp/solver_backend.hpp"

namespace phaze {
namespace {

TEST(IlpModel, BuildsRowsMergingRepeatedColumns) {
  IlpModel m;
  int x = m.AddVariable(0, 4, VarType::kInteger, "x", 1.0);
  int y = m.AddContinuous(-kInfinity, kInfinity, "y");
  m.AddRow(1, {{x, 2.0}, {y, 1.0}, {x, 1.0}, {y, -1.0}}, kInfinity, "c");
  ASSERT_EQ(m.NumRows(), 1);
  auto row = m.Row(0);
  ASSERT_EQ(row.columns.size(), 1u);  // y cancelled out, x merged to 3
  EXPECT_EQ(row.columns[0], x);
  EXPECT_DOUBLE_EQ(row.coefficients[0], 3.0);
  EXPECT_EQ(row.name, "c");
  EXPECT_EQ(m.NumIntegral(), 1);
  std::vector<double> v = {1.0, 0.0};
  EXPECT_DOUBLE_EQ(m.MaxViolation(v), 0.0);
  v[0] = 0.0;  // 3·0 ≥ 1 violated by 1
  EXPECT_DOUBLE_EQ(m.MaxViolation(v), 1.0);
}

TEST(IlpModel, RejectsBadInputWithNames) {
  IlpModel m;
  m.AddBinary("b");
  auto what = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("<none>");
  };
  EXPECT_EQ(what([&] { m.AddVariable(2, 1, VarType::kContinuous, "z"); }),
            "IlpModel: variable 'z' has invalid bounds [2.000000, 1.000000]");
  EXPECT_EQ(what([&] { m.AddVariable(0, 2, VarType::kBinary, "bb"); }),
            "IlpModel: binary variable 'bb' has bounds [0.000000, 2.000000] outside [0, 1]");
  EXPECT_EQ(what([&] { m.AddRow(0, {{5, 1.0}}, 1, "r"); }),
            "IlpModel: row 'r' refers to variable index 5 but the model has 1 variables");
  EXPECT_EQ(what([&] { m.AddRow(3, {{0, 1.0}}, 1, "r"); }),
            "IlpModel: row 'r' has invalid bounds [3.000000, 1.000000]");
}

TEST(SolveWithoutSolver, EmptyModels) {
  IlpModel m;
  m.SetObjectiveOffset(2.5);
  auto r = SolveWithoutSolver(m);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, SolveStatus::kOptimal);
  EXPECT_DOUBLE_EQ(r->objective, 2.5);
  m.AddRow(1, {}, 2, "impossible");  // 0 ∈ [1, 2]? no
  EXPECT_EQ(SolveWithoutSolver(m)->status, SolveStatus::kInfeasible);
  m.AddBinary();
  EXPECT_FALSE(SolveWithoutSolver(m).has_value());
}

}  // namespace
}  // namespace phaze
