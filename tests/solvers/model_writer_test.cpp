// LP/MPS export: the files are read back by the real `cbc` and `lp_solve` command-line tools, whose
// optimum must equal the hand-computed one (skipped when a tool is not installed).
#include "phaze/ilp/model_writer.hpp"

#include "phaze/core/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "test_util.hpp"

namespace phaze {
namespace {

bool HaveTool(const std::string& tool) {
  return testing::Run("command -v " + tool).exit_code == 0;
}

double ParseObjective(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return std::nan("");
  return std::stod(m[1]);
}

// x, y ∈ {0..10}: 3 ≤ x + y ≤ 5, x − y = 1, y ≥ 1, x ≤ 4 (see the conformance suite):
// max 3x + 2y + 7 = 13 + 7 = 20; min 3x + 2y + 7 = 8 + 7 = 15.
IlpModel RowKinds(ObjectiveSense sense) {
  IlpModel m;
  int x = m.AddVariable(0, 10, VarType::kInteger, "x", 3);
  int y = m.AddVariable(0, 10, VarType::kInteger, "y", 2);
  m.AddVariable(-kInfinity, kInfinity, VarType::kContinuous, "free", 0);
  m.AddRow(3, {{x, 1}, {y, 1}}, 5, "ranged");
  m.AddRow(1, {{x, 1}, {y, -1}}, 1, "equality");
  m.AddRow(1, {{y, 1}}, kInfinity, "lower_only");
  m.AddRow(-kInfinity, {{x, 1}}, 4, "upper_only");
  m.SetObjectiveOffset(7);
  m.SetSense(sense);
  return m;
}

TEST(ModelWriter, MpsHasEverySection) {
  std::string mps = ToMps(RowKinds(ObjectiveSense::kMaximize));
  for (const char* s : {"NAME", "negated", "_offset", "ROWS", "COLUMNS", "'INTORG'", "RHS", "RANGES",
                        "BOUNDS", " FR BND free", "ENDATA"}) {
    EXPECT_NE(mps.find(s), std::string::npos) << s;
  }
}

TEST(ModelWriter, RejectsUnknownExtensions) {
  EXPECT_THROW(WriteModel(IlpModel(), "/tmp/model.txt"), Error);
}

TEST(ModelWriter, CbcReadsMpsAndLp) {
  if (!HaveTool("cbc")) GTEST_SKIP() << "cbc command-line tool not installed (coinor-cbc)";
  testing::TempDir dir;
  for (auto sense : {ObjectiveSense::kMinimize, ObjectiveSense::kMaximize}) {
    for (std::string ext : {".mps", ".lp"}) {
      // MPS writes a maximisation as min of the negated objective: the tool reports −20.
      double expected = sense == ObjectiveSense::kMinimize ? 15 : ext == ".mps" ? -20 : 20;
      auto file = dir / ("m" + ext);
      WriteModel(RowKinds(sense), file.string());
      auto r = testing::Run("cbc " + file.string() + " solve");
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
      EXPECT_NEAR(ParseObjective(r.out, R"(Objective value:\s+(-?[0-9.eE+-]+))"), expected, 1e-6)
          << ext << "\n" << r.out;
    }
  }
}

TEST(ModelWriter, LpSolveReadsMps) {
  if (!HaveTool("lp_solve")) GTEST_SKIP() << "lp_solve command-line tool not installed (lp-solve)";
  testing::TempDir dir;
  for (auto sense : {ObjectiveSense::kMinimize, ObjectiveSense::kMaximize}) {
    double expected = sense == ObjectiveSense::kMinimize ? 15 : -20;
    auto file = dir / "m.mps";
    WriteModel(RowKinds(sense), file.string());
    auto r = testing::Run("lp_solve -S3 -fmps " + file.string());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NEAR(ParseObjective(r.out, R"(Value of objective function:\s+(-?[0-9.eE+-]+))"),
                expected, 1e-6)
        << r.out;
  }
}

}  // namespace
}  // namespace phaze
