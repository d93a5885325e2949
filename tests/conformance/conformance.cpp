// Phaze::conformance's own part: the registry of the plugins under test, the estimator makers, the
// suites' inputs, and main() — it loads the plugins named on the command line before GoogleTest
// instantiates the suites over what they registered.
#include "phaze/conformance/conformance.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>

#include "phaze/core/error.hpp"
#include "phaze/core/paths.hpp"
#include "phaze/graph/graph_builder.hpp"
#include "phaze/plugin/plugin_loader.hpp"
#include "model_ops.hpp"

namespace phaze::conformance {

extern int kEstimatorSuite, kStrategySuite, kSolverSuite;  // the suites' anchors

namespace {

std::map<std::string, EstimatorMaker>& Makers() {
  static std::map<std::string, EstimatorMaker> makers;
  return makers;
}

PluginSources& Defaults() {
  static PluginSources sources;
  return sources;
}

}  // namespace

Registry& Plugins() {
  static Registry registry;
  return registry;
}

bool SetEstimatorMaker(const std::string& name, EstimatorMaker make) {
  Makers()[name] = std::move(make);
  return true;
}

std::shared_ptr<Estimator> MakeEstimator(const std::string& name) {
  if (auto it = Makers().find(name); it != Makers().end()) return it->second(Plugins());
  return Plugins().CreateEstimator(name, ConfigNode::EmptyMap("conformance", "estimator.params"));
}

bool SetDefaultPlugins(std::vector<std::string> directories, std::vector<std::string> files) {
  Defaults().directories = std::move(directories);
  Defaults().files = std::move(files);
  return true;
}

std::vector<OpWork> TransformerOps() {
  static const std::vector<OpWork> ops = [] {
    std::vector<std::string> files;
    for (const char* model : {"gpt2-xl", "llama2-7b", "bert-large", "mixtral-8x7b"}) {
      files.push_back((WorkloadsDirectory() / (std::string(model) + ".yaml")).string());
    }
    return testing::ModelOps(files);
  }();
  return ops;
}

std::vector<ArchConfig> Archs() {
  return {LoadArchConfig("tpuv4"), LoadArchConfig("phaze-common"),
          LoadArchConfig("spotlight-gpt2")};
}

std::vector<GemmShape> MonotoneShapes() {
  return {GemmShape{1, 512, 1024, 1024}, GemmShape{16, 512, 512, 64}, GemmShape{1, 1, 4096, 4096},
          GemmShape{1, 2048, 11008, 4096}};
}

// What the command line asked to load: at least one plugin, and every one registers something.
TEST(Conformance, ThePluginsUnderTestRegisterComponents) {
  std::size_t n = 0;
  for (ComponentKind kind : {ComponentKind::kEstimator, ComponentKind::kParallelismStrategy,
                             ComponentKind::kSolverBackend}) {
    n += Plugins().Names(kind).size();
  }
  EXPECT_GT(n, 0u) << "no estimator, strategy or solver backend to check: name plugins with "
                      "--plugin FILE or --plugin-dir DIR";
}

}  // namespace phaze::conformance

int main(int argc, char** argv) {
  // --plugin FILE, --plugin-dir DIR (also --plugin=FILE): taken out before GoogleTest reads argv.
  phaze::PluginSources sources;
  std::vector<char*> rest = {argv[0]};
  auto take = [&](int& i, const std::string& flag, std::vector<std::string>& list) {
    const std::string a = argv[i];
    if (a == flag && i + 1 < argc) {
      list.push_back(argv[++i]);
      return true;
    }
    if (a.rfind(flag + "=", 0) == 0) {
      list.push_back(a.substr(flag.size() + 1));
      return true;
    }
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    if (!take(i, "--plugin", sources.files) && !take(i, "--plugin-dir", sources.directories)) {
      rest.push_back(argv[i]);
    }
  }
  if (const char* env = std::getenv("PHAZE_PLUGIN_PATH")) sources.env_path = env;
  if (sources.files.empty() && sources.directories.empty() && sources.env_path.empty()) {
    sources.files = phaze::conformance::Defaults().files;
    sources.directories = phaze::conformance::Defaults().directories;
  }
  sources.use_default_directory = false;
  try {
    for (const auto& f : phaze::PluginLoader::LoadAll(sources, phaze::conformance::Plugins())) {
      std::cerr << "conformance: loaded " << f.string() << "\n";
    }
  } catch (const phaze::Error& e) {
    std::cerr << "conformance: " << e.what() << "\n";
    return 2;
  }
  int n = static_cast<int>(rest.size());
  rest.push_back(nullptr);  // argv[argc] is null: GoogleTest shifts it when it removes its flags
  ::testing::InitGoogleTest(&n, rest.data());
  // The anchors are 0; adding them keeps the suites' objects linked in (a discarded read would not).
  using namespace phaze::conformance;
  return RUN_ALL_TESTS() + kEstimatorSuite + kStrategySuite + kSolverSuite;
}
