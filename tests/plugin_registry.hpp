// The plugins this build produced (build/plugins/*.so, plus the README's example estimator when it
// was built), loaded once per test program into one registry, so every component can be created by
// name (TEST_P over registered names).
#pragma once

#include <filesystem>
#include <string>

#include "phaze/plugin/plugin_loader.hpp"
#include "phaze/plugin/registry.hpp"
#include "test_paths.hpp"

namespace phaze::testing {

inline Registry& BuiltPlugins() {
  static Registry* registry = [] {
    auto* r = new Registry();
    PluginSources s;
    s.directories = {PHAZE_PLUGIN_DIR};
    const std::string example = std::string(PHAZE_EXAMPLES_DIR) + "/roofline-example.so";
    if (std::filesystem::exists(example)) s.files = {example};
    s.use_default_directory = false;
    PluginLoader::LoadAll(s, *r);
    return r;
  }();
  return *registry;
}

}  // namespace phaze::testing
