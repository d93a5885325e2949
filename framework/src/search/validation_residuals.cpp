#include "phaze/search/validation_residuals.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

#include "phaze/core/error.hpp"
#include "phaze/core/paths.hpp"
#include "phaze/core/text_format.hpp"

namespace phaze {

ValidationResiduals ValidationResiduals::Load(const std::filesystem::path& csv) {
  std::ifstream in(csv);
  if (!in) throw ConfigError(csv.string() + ": cannot read the validation residuals");
  ValidationResiduals r;
  r.source_ = csv.string();
  std::string line;
  std::vector<std::string> header;
  auto column = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      throw ConfigError(csv.string() + ":1: no column '" + name + "' (validate.py --residuals "
                        "writes source, gpus, t, p, d, …, error)");
    }
    return static_cast<std::size_t>(it - header.begin());
  };
  std::size_t gpus = 0, t = 0, p = 0, d = 0, error = 0;
  std::optional<std::size_t> device, cp;  // optional columns
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> cells = SplitCommas(line);
    if (header.empty()) {
      header = cells;
      gpus = column("gpus"), t = column("t"), p = column("p"), d = column("d");
      error = column("error");
      if (auto it = std::find(header.begin(), header.end(), "device"); it != header.end()) {
        device = static_cast<std::size_t>(it - header.begin());
      }
      if (auto it = std::find(header.begin(), header.end(), "cp"); it != header.end()) {
        cp = static_cast<std::size_t>(it - header.begin());
      }
      continue;
    }
    const std::string at = csv.string() + ":" + std::to_string(number) + ": ";
    if (cells.size() != header.size()) {
      throw ConfigError(at + std::to_string(cells.size()) + " cells, the header has " +
                        std::to_string(header.size()));
    }
    Run run;
    try {
      run.gpus = std::stoll(cells[gpus]);
      run.t = std::stoll(cells[t]);
      run.p = std::stoll(cells[p]);
      run.d = std::stoll(cells[d]);
      run.error = std::stod(cells[error]);
      if (cp && !cells[*cp].empty()) run.cp = std::stoll(cells[*cp]);
    } catch (const std::exception&) {
      throw ConfigError(at + "expected numbers in gpus, t, p, d, error and cp");
    }
    if (run.gpus < 1 || run.t < 1 || run.p < 1 || run.d < 1 || !std::isfinite(run.error)) {
      throw ConfigError(at + "gpus, t, p and d must be >= 1 and the error finite");
    }
    if (run.cp < 1 || run.t % run.cp != 0) {
      throw ConfigError(at + "cp must be >= 1 and divide t (the whole width, tp·cp)");
    }
    if (device) run.device = cells[*device];
    r.runs_.push_back(run);
  }
  return r;
}

ValidationResiduals ValidationResiduals::Installed() {
  const std::filesystem::path path = ShareDirectory() / "validation" / "residuals.csv";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  return Load(path);
}

ValidationResiduals::Band ValidationResiduals::For(std::int64_t t, std::int64_t p,
                                                   std::int64_t gpus, std::int64_t node_size,
                                                   const std::string& device,
                                                   std::int64_t cp) const {
  const bool pipeline = p > 1;
  const bool nodes = gpus > node_size;
  const bool context = cp > 1;
  const std::string width = "t " + std::to_string(t);
  const std::string piped = pipeline ? ", with a pipeline" : ", without a pipeline";
  const std::string parallel = context ? ", context parallel" : "";
  const std::string every = context ? "every context-parallel run" : "every run";
  struct Group {
    std::string shape;
    int level;       // 0: t, pipeline and span; 1: t and pipeline; 2: t; 3: every run
    bool on_device;  // only the runs on `device`
    bool any = false;  // every validated run, context parallel or not
  };
  std::vector<Group> groups;
  for (bool on_device : {true, false}) {
    if (on_device && device.empty()) continue;
    const std::string on = on_device ? ", on " + device : "";
    groups.push_back(
        {width + piped + (nodes ? ", several nodes" : ", one node") + parallel + on, 0, on_device});
    groups.push_back({width + piped + parallel + on, 1, on_device});
    groups.push_back({width + parallel + on, 2, on_device});
    groups.push_back({on_device ? every + " on " + device
                      : context ? every
                                : "every validated run",
                      3, on_device, !on_device && !context});
  }
  if (context) groups.push_back({"every validated run", 3, false, true});
  for (const Group& g : groups) {
    std::vector<double> errors;
    for (const Run& run : runs_) {
      const bool same_t = run.t == t;
      const bool same_pipeline = (run.p > 1) == pipeline;
      const bool same_span = (run.gpus > node_size) == nodes;
      const bool same_context = (run.cp > 1) == context;
      if ((g.on_device && run.device != device) || (g.level <= 2 && !same_t) ||
          (g.level <= 1 && !same_pipeline) || (g.level == 0 && !same_span) ||
          (!g.any && !same_context)) {
        continue;
      }
      errors.push_back(std::fabs(run.error));
    }
    const bool last = &g == &groups.back();
    if (errors.size() < kMinRuns && !last) continue;
    Band band;
    band.shape = g.shape;
    band.runs = errors.size();
    if (errors.empty()) return band;
    std::sort(errors.begin(), errors.end());
    double sum = 0;
    for (double e : errors) sum += e;
    band.mean_abs = sum / static_cast<double>(errors.size());
    band.max_abs = errors.back();
    // Nearest rank: the smallest error at or above 90% of the runs.
    const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(errors.size())));
    band.p90_abs = errors[std::max<std::size_t>(rank, 1) - 1];
    return band;
  }
  return {};
}

}  // namespace phaze
