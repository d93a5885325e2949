// The "table" estimator: latencies measured elsewhere, looked up from a CSV file —
//   op,arch,single_core_s,all_cores_s
//   gemm|1x512x1024x1024|r1048576|w1048576|p2097152,tpuv4,1.9e-05,3.1e-06
// where `op` is OpWork::Signature() (what `phaze estimate` prints as "signature") and `arch` the
// architecture's name. Lines starting with '#' are comments. A missing row is an error naming the
// row to add. (Collectives and area are the framework's: the network and area models.)
// params: {file: PATH}  (relative to the run config's directory)
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>

#include "phaze/core/files.hpp"
#include "phaze/estimate/estimator.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/plugin/registry.hpp"

namespace phaze::estimators {

namespace {

class TableEstimator : public Estimator {
 public:
  explicit TableEstimator(const ConfigNode& params) {
    params.ExpectKeys({"file"});
    const ConfigNode file = params.Child("file");
    std::filesystem::path path = file.AsString();
    if (path.is_relative()) path = std::filesystem::path(params.Source()).parent_path() / path;
    file_ = path.string();
    std::istringstream in;
    try {
      in.str(ReadInputFile(file_));
    } catch (const ConfigError& e) {
      file.Fail(std::string("the latency table: ") + e.what());
    }
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty() || line[0] == '#' || line.rfind("op,", 0) == 0) continue;
      std::vector<std::string> cells;
      std::stringstream ss(line);
      for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(cell);
      const std::string where = file_ + ":" + std::to_string(number) + ": ";
      if (cells.size() != 4) {
        throw ConfigError(where + "expected 4 columns op,arch,single_core_s,all_cores_s, found " +
                          std::to_string(cells.size()));
      }
      OpEstimate e;
      try {
        e.single_core_s = std::stod(cells[2]);
        e.all_cores_s = std::stod(cells[3]);
      } catch (const std::exception&) {
        throw ConfigError(where + "expected two numbers of seconds, found '" + cells[2] + "', '" +
                          cells[3] + "'");
      }
      if (!(e.single_core_s >= 0) || !(e.all_cores_s >= 0)) {
        throw ConfigError(where + "latencies must be finite and ≥ 0");
      }
      rows_[cells[0] + "@" + cells[1]] = e;
    }
  }

  OpEstimate Estimate(const OpWork& op, const ArchConfig& arch, Pass) const override {
    if (op.Core() == CoreClass::kNone) return {};
    const std::string signature = op.Signature();
    auto it = rows_.find(signature + "@" + arch.name);
    if (it == rows_.end()) {
      throw UnsupportedOpError("estimator 'table' (" + file_ + "): no row for op '" + op.name +
                               "' on architecture '" + arch.name + "'; add the row: " + signature +
                               "," + arch.name + ",SINGLE_CORE_S,ALL_CORES_S");
    }
    return it->second;
  }

 private:
  std::string file_;
  std::map<std::string, OpEstimate> rows_;
};

}  // namespace

plugin::PluginInfo TablePlugin() {
  return {plugin::kAbiVersion, "table", "1.0.0", "latencies looked up from a CSV of measurements",
          [](Registry& registry) {
            registry.AddEstimator(
                "table", "per-op latencies from a CSV (params: file)",
                [](const ConfigNode& params) { return std::make_shared<TableEstimator>(params); });
          }};
}

}  // namespace phaze::estimators

PHAZE_PLUGIN_ENTRY(phaze::estimators::TablePlugin)
