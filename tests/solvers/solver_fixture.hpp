// The solver backends of this build, by name (TEST_P over registered names).
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "phaze/ilp/solver_backend.hpp"
#include "plugin_registry.hpp"

namespace phaze::testing {

inline Registry& SolverRegistry() { return BuiltPlugins(); }

// The backends every conformance test runs on; a backend not built is skipped with the reason.
inline const std::vector<std::string>& BackendNames() {
  static const std::vector<std::string> names = {"cbc", "lpsolve"};
  return names;
}

class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!SolverRegistry().Has(ComponentKind::kSolverBackend, GetParam())) {
      GTEST_SKIP() << "solver backend '" << GetParam() << "' was not built (see PHAZE_WITH_*)";
    }
    backend_ = SolverRegistry().CreateSolverBackend(GetParam());
  }
  std::shared_ptr<SolverBackend> backend_;
};

}  // namespace phaze::testing
