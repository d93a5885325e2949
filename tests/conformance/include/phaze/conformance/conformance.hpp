// The plugin conformance suites (Phaze::conformance): what every estimator, parallelism strategy
// and ILP solver backend must do, as GoogleTest suites parameterised over the components the
// loaded plugins register — the same checks phaze's own plugins pass (tests/conformance/README.md).
//
// A plugin's project links Phaze::conformance (it brings main()) into a test executable and runs
//   my_plugin_conformance --plugin path/to/my-plugin.so [--plugin-dir DIR] [gtest flags]
// (PHAZE_PLUGIN_PATH, colon-separated, is read too). Every estimator, strategy and backend those
// plugins register is checked; the plugins of phaze itself are not loaded unless named.
// An estimator that needs parameters (a table file, say) is made by a maker registered before
// main() runs, from a static initializer in the plugin's test:
//   static const bool kTable = phaze::conformance::SetEstimatorMaker("table", [](const Registry& r)
//       { return r.CreateEstimator("table", phaze::ConfigNode::ParseFile("table-params.yaml")); });
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "phaze/arch/arch_config.hpp"
#include "phaze/estimate/estimator.hpp"
#include "phaze/plugin/registry.hpp"

namespace phaze::conformance {

// The components under test: what the plugins named to main() registered.
Registry& Plugins();

// Makes estimator `name` for the suite (default: created with empty params).
using EstimatorMaker = std::function<std::shared_ptr<Estimator>(const Registry&)>;
bool SetEstimatorMaker(const std::string& name, EstimatorMaker make);
std::shared_ptr<Estimator> MakeEstimator(const std::string& name);

// The plugins main() loads when its command line and PHAZE_PLUGIN_PATH name none (phaze's own
// test of its bundled plugins sets its build's plugin directory this way).
bool SetDefaultPlugins(std::vector<std::string> directories, std::vector<std::string> files);

// The inputs of the estimator suite: every forward and backward op of GPT-2 XL, Llama-2-7B,
// BERT-large and Mixtral-8x7B (fused and not) at micro-batches 1 and 4; the chips (the TPUv4-like
// baseline, the paper's common winner, Spotlight's GPT-2 chip); GEMM shapes for monotonicity.
std::vector<OpWork> TransformerOps();
std::vector<ArchConfig> Archs();
std::vector<GemmShape> MonotoneShapes();

}  // namespace phaze::conformance
