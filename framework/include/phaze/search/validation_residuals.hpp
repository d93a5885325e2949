// Error bands for predicted plans (`phaze plan`): the measured training runs the device model was
// validated on (share/validation/residuals.csv, written by share/validation/validate.py and
// published.py with --residuals; A100 runs), and the errors of the time per iteration phaze
// predicted for them.
//
// Band(t, p, gpus, node_size, device): the runs most like the plan, the first of these groups
// holding at least kMinRuns runs — same t, same pipeline (p > 1 or not) and same span (one node or
// several, gpus > node_size) · same t and pipeline · same t · every run — first among the runs
// measured on the plan's device (the file's optional `device` column: the preset's name; the
// device model is calibrated per device, so its errors are the device's own), then among all
// runs; and their mean, 90th percentile (nearest rank) and largest |error|, with the group
// described ("t 8, with a pipeline, several nodes, on h100-sxm-80gb"). No runs: a band of 0 runs.
// Context parallelism is part of the shape at every level (the file's optional `cp` column, 1 when
// absent; t is the whole width, tp·cp, as plans have it): a plan with cp > 1 draws on the runs
// with context parallelism ("…, context parallel", "every context-parallel run on …"), a plan
// without on those without — long sequences err otherwise (share/validation/README.md) — and only
// when no group of such runs holds kMinRuns on any device, on every validated run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace phaze {

class ValidationResiduals {
 public:
  static constexpr std::size_t kMinRuns = 5;

  struct Run {
    std::int64_t gpus = 1, t = 1, p = 1, d = 1;
    std::int64_t cp = 1;  // context-parallel width, of t
    double error = 0;    // predicted / measured − 1, of the time per iteration
    std::string device;  // the preset it was predicted on ("" when the file does not say)
  };
  struct Band {
    std::size_t runs = 0;
    double mean_abs = 0, p90_abs = 0, max_abs = 0;  // fractions
    std::string shape;                               // which runs
  };

  // Throws ConfigError ("FILE:LINE: …") for a malformed file.
  static ValidationResiduals Load(const std::filesystem::path& csv);
  // ShareDirectory()/validation/residuals.csv; empty when there is none.
  static ValidationResiduals Installed();

  Band For(std::int64_t t, std::int64_t p, std::int64_t gpus, std::int64_t node_size,
           const std::string& device = "", std::int64_t cp = 1) const;
  const std::vector<Run>& Runs() const { return runs_; }
  const std::string& Source() const { return source_; }

 private:
  std::vector<Run> runs_;
  std::string source_;
};

}  // namespace phaze
