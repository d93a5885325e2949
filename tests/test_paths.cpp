// The absolute paths of test_paths.hpp, from tests/CMakeLists.txt (constant-initialized, so other
// files' namespace-scope strings may read them).
#include "test_paths.hpp"

namespace phaze::testing::paths {
const char* const kSourceDir = PHAZE_TEST_SOURCE_DIR;
const char* const kPluginDir = PHAZE_TEST_PLUGIN_DIR;
const char* const kFixtureDir = PHAZE_TEST_FIXTURE_DIR;
const char* const kExamplesDir = PHAZE_TEST_EXAMPLES_DIR;
const char* const kBinary = PHAZE_TEST_BINARY;
}  // namespace phaze::testing::paths
