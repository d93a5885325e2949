// explored.csv: one row per explored config × model (columns: share/runs/README.md).
#include "phaze/report/search_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>
#include <fmt/printf.h>

#include "phaze/core/files.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/core/xml.hpp"
#include "phaze/placement/layer_table_file.hpp"
#include "phaze/schedule/schedule_file.hpp"
#include "phaze/search/pareto_front.hpp"
#include "phaze/report/search_plots.hpp"
#include "phaze/version.hpp"


namespace phaze {

namespace {

// A CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
std::string CsvField(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void WriteExploredCsv(std::ostream& csv, const SearchResults& r) {
  csv << "config,architecture,num_tc,pe_x,pe_y,num_vc,pe_vc,glb_mib,l2_tc_kib,l2_vc_kib,area_mm2,"
         "common_score,common_winner,model,model_winner,feasible,throughput_samples_per_s,"
         "throughput_tokens_per_s,time_per_batch_s,mfu,pipeline_stages,data_parallel,"
         "tensor_parallel,virtual_stages,micro_batch,recompute,sharding,strategy,expert_parallel,"
         "expert_tensor_parallel,"
         "hbm_gib,bubble_share,sync_share,"
         "power_w,energy_per_sample_j,energy_per_token_j,usd_per_million_tokens,model_score,"
         "reason\n";
  auto number = [](double v) { return FormatDouble(v); };
  for (std::size_t i = 0; i < r.outcome.explored.size(); ++i) {
    const auto& e = r.outcome.explored[i];
    const ArchConfig& a = e.point.arch;
    for (std::size_t m = 0; m < e.evaluation.models.size(); ++m) {
      const PlanChoice& c = e.evaluation.models[m].best;
      csv << i << "," << CsvField(a.name) << "," << a.num_tc << "," << a.pe_x << "," << a.pe_y
          << "," << a.num_vc << "," << a.pe_vc << "," << number(a.glb_bytes / 1048576.0) << ","
          << number(a.l2_tc_bytes / 1024.0) << "," << number(a.l2_vc_bytes / 1024.0) << ","
          << number(e.point.area_um2 * 1e-6) << ","
          << (e.evaluation.pruned ? std::string() : number(e.evaluation.score)) << ","
          << (static_cast<int>(i) == r.best_common ? "true" : "false") << ","
          << CsvField(e.evaluation.models[m].model) << ","
          << (m < r.best_per_model.size() && r.best_per_model[m] == static_cast<int>(i) ? "true"
                                                                                         : "false")
          << "," << (c.feasible ? "true" : "false") << ",";
      if (c.feasible) {
        csv << number(c.plan.throughput_samples_per_s) << "," << number(c.tokens_per_s) << ","
            << number(c.plan.time_per_batch_s) << "," << number(c.mfu) << ","
            << c.plan.pipeline_stages << "," << c.plan.data_parallel << ","
            << c.plan.tensor_parallel << "," << c.plan.virtual_stages << "," << c.micro_batch << ","
            << ToString(c.recompute) << "," << ToString(c.sharding) << "," << CsvField(c.strategy)
            << "," << (c.expert_parallel > 0 ? std::to_string(c.expert_parallel) : std::string())
            << ","
            << (c.expert_tensor_parallel > 0 ? std::to_string(c.expert_tensor_parallel)
                                             : std::string())
            << "," << number(c.hbm_gib) << "," << number(c.plan.bubble_share) << ","
            << number(c.plan.sync_share) << "," << number(c.power_w) << ","
            << number(c.EnergyPerSampleJ()) << "," << number(c.energy_per_token_j) << ","
            << number(c.usd_per_million_tokens) << "," << number(e.evaluation.models[m].score)
            << ",\n";
      } else {
        csv << std::string(22, ',') << CsvField(c.reason) << "\n";
      }
    }
  }
}

std::string ExploredCsv(const SearchResults& r) {
  std::ostringstream csv;
  WriteExploredCsv(csv, r);
  return csv.str();
}

}  // namespace phaze
