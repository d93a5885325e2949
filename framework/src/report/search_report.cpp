#include "phaze/report/search_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
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

#include "report_tables.hpp"

namespace phaze {

using report::ArchText;

std::string SearchSummary(const SearchResults& r) {
  std::ostringstream out;
  out << "explored " << r.outcome.explored.size() << " of " << r.outcome.candidates
      << " architectures (" << ToString(r.outcome.stop_reason) << ")\n";
  std::string line = fmt::sprintf("%-22s %-44s %9s %14s %9s %6s %8s\n", "model",
                                  "best architecture", "area mm²", "samples/s", "vs ref", "MFU",
                                  "W");
  out << line;
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    const double ref = r.ReferenceThroughput(r.models[m].name);
    if (r.best_per_model[m] < 0) {
      line = fmt::sprintf("%-22s %-44s\n", r.models[m].name.c_str(), "no feasible config");
      out << line;
      continue;
    }
    const auto& e = r.outcome.explored[r.best_per_model[m]];
    const auto& c = e.evaluation.models[m].best;
    line = fmt::sprintf("%-22s %-44s %9.2f %14.4g %9s %5.1f%% %8.1f\n",
                  r.models[m].name.c_str(), ArchText(e.point.arch).c_str(), e.point.area_um2 * 1e-6,
                  c.Throughput(),
                  ref > 0 ? FormatNumber("%.2fx", c.Throughput() / ref).c_str() : "-", 100 * c.mfu,
                  c.power_w);
    out << line;
  }
  if (r.best_common >= 0) {
    const auto& e = r.outcome.explored[r.best_common];
    out << "common: " << ArchText(e.point.arch) << ", "
        << FormatNumber("%.2f", e.point.area_um2 * 1e-6) << " mm², " << ToString(r.run.search.mean)
        << "-mean " << FormatNumber("%.4g", e.evaluation.score) << " "
        << ObjectiveUnit(r.run.search.objective) << "\n";
  }
  return out.str();
}

void WriteSearchOutputs(const SearchResults& r, const OutputDirectory& dir, bool plots) {
  // Each file's text is made when it is written: results.json and explored.csv straight into
  // their files (tens of MB each for an exhaustive search), the others one at a time.
  auto text = [](auto make) { return [make](std::ostream& out) { out << make(); }; };
  std::vector<std::pair<std::string, OutputDirectory::Writer>> files = {
      {"results.json",
       [&](std::ostream& out) {
         WriteSearchResultsJson(out, r, 1);
         out << '\n';
       }},
      {"report.md", text([&] { return SearchReportMarkdown(r); })},
      {"explored.csv", [&](std::ostream& out) { WriteExploredCsv(out, r); }}};
  if (plots) {
    files.emplace_back("throughput-vs-area.svg", text([&] { return ThroughputAreaSvg(r); }));
    files.emplace_back("throughput-vs-power.svg", text([&] { return ThroughputPowerSvg(r); }));
    files.emplace_back("pipeline.svg", text([&] { return PipelineSvg(r); }));
    files.emplace_back("memory.svg", text([&] { return MemorySvg(r); }));
    if (r.winner_schedule) {
      files.emplace_back("schedule.svg", text([&] {
                           return ScheduleToSvg(r.winner_schedule->problem,
                                                r.winner_schedule->result,
                                                r.winner_schedule->title);
                         }));
    }
  }
  dir.WriteSet(files, kSearchOutputFiles);
}

}  // namespace phaze
