// Where the test and benchmark programs find the source tree, this build's plugins, fixture
// plugins and examples, and the phaze binary. The absolute paths are compiled into one file,
// test_paths.cpp (its definitions set in tests/CMakeLists.txt), so that every other test file
// compiles to the same object in any checkout: ccache then shares them between a working tree and
// a clean clone of it (CMakeLists.txt, CCACHE_BASEDIR).
#pragma once

namespace phaze::testing::paths {
extern const char* const kSourceDir;   // the checkout
extern const char* const kPluginDir;   // build/plugins
extern const char* const kFixtureDir;  // build/tests/fixtures
extern const char* const kExamplesDir; // build/examples
extern const char* const kBinary;      // build/phaze
}  // namespace phaze::testing::paths

#define PHAZE_SOURCE_DIR ::phaze::testing::paths::kSourceDir
#define PHAZE_PLUGIN_DIR ::phaze::testing::paths::kPluginDir
#define PHAZE_FIXTURE_DIR ::phaze::testing::paths::kFixtureDir
#define PHAZE_EXAMPLES_DIR ::phaze::testing::paths::kExamplesDir
#define PHAZE_BINARY ::phaze::testing::paths::kBinary
