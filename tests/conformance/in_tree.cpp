// phaze's own run of the conformance suites (Phaze::conformance) on the plugins this build produced
// (build/plugins/, and the README's example estimator in build/examples/), as a plugin author runs
// them on theirs. The table estimator needs a table: one is written from the device model's
// estimates of every op the suite asks for, at full precision, as a measured table would hold them.
#include <filesystem>
#include <set>
#include <sstream>

#include "phaze/conformance/conformance.hpp"
#include "test_util.hpp"
#include "test_paths.hpp"

namespace {

using namespace phaze;

const bool kPlugins = conformance::SetDefaultPlugins(
    {PHAZE_PLUGIN_DIR}, std::filesystem::exists(std::string(PHAZE_EXAMPLES_DIR) + "/roofline-example.so")
                            ? std::vector<std::string>{std::string(PHAZE_EXAMPLES_DIR) + "/roofline-example.so"}
                            : std::vector<std::string>{});

const bool kTable = conformance::SetEstimatorMaker("table", [](const Registry& r) {
  static const testing::TempDir dir;
  const auto source = r.CreateEstimator("device", ConfigNode::EmptyMap("test", "params"));
  std::vector<OpWork> ops = conformance::TransformerOps();
  for (GemmShape s : conformance::MonotoneShapes()) {
    ops.push_back(OpWork::Gemm(s, 2));
    for (int dim = 0; dim < 4; ++dim) {
      GemmShape bigger = s;
      (dim == 0 ? bigger.batch : dim == 1 ? bigger.m : dim == 2 ? bigger.n : bigger.k) *= 2;
      ops.push_back(OpWork::Gemm(bigger, 2));
    }
  }
  std::ostringstream csv;
  csv.precision(17);
  csv << "op,arch,single_core_s,all_cores_s\n";
  std::set<std::string> written;
  for (const auto& arch : conformance::Archs()) {
    for (const auto& op : ops) {
      if (!written.insert(op.Signature() + "," + arch.name).second) continue;
      const OpEstimate e = source->Estimate(op, arch, Pass::kForward);
      csv << op.Signature() << "," << arch.name << "," << e.single_core_s << "," << e.all_cores_s
          << "\n";
    }
  }
  testing::WriteFile(dir / "lat.csv", csv.str());
  testing::WriteFile(dir / "params.yaml", "file: lat.csv\n");
  return r.CreateEstimator("table", ConfigNode::ParseFile((dir / "params.yaml").string()));
});

}  // namespace
