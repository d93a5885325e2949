// The outputs of a search (issue 9): results.json (every explored config with its per-model
// results, the winners, the baselines and speed-ups, the effective run config, plugin versions;
// wall times only under the top-level "timings" key, so two runs of the same inputs give the same
// file apart from it), report.md (the paper's Table 1, Figure 4 as a table, Table 3's MFU) and SVG
// plots (throughput vs area, the winner's pipelines, the winner's main layer schedule). The schema
// is documented in share/runs/README.md.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "phaze/core/json.hpp"
#include "phaze/core/output_directory.hpp"
#include "phaze/search/search_driver.hpp"

namespace phaze {

Json PlanChoiceToJson(const PlanChoice& choice);
Json SearchResultsToJson(const SearchResults& results);
// SearchResultsToJson(results).Dump(indent), without ever holding the whole document: the
// explored configs are written into the text one at a time (what results.json files get).
std::string SearchResultsJsonText(const SearchResults& results, int indent);
// The same text, written to `out` as it is made (results.json).
void WriteSearchResultsJson(std::ostream& out, const SearchResults& results, int indent);
std::string SearchReportMarkdown(const SearchResults& results);
// One row per explored config × model (columns: share/runs/README.md, "explored.csv"): what a
// spreadsheet or pandas reads.
std::string ExploredCsv(const SearchResults& results);
void WriteExploredCsv(std::ostream& out, const SearchResults& results);  // the same, as made
// A few lines for the terminal: winners and speed-ups.
std::string SearchSummary(const SearchResults& results);

// The files a search writes, as one set (OutputDirectory::WriteSet).
inline const std::vector<std::string> kSearchOutputFiles = {
    "results.json",           "report.md",    "explored.csv", "throughput-vs-area.svg",
    "throughput-vs-power.svg", "pipeline.svg", "memory.svg",   "schedule.svg"};

// Writes results.json, report.md, explored.csv and (with `plots`) throughput-vs-area.svg,
// pipeline.svg, memory.svg and schedule.svg into `dir` as one set; the set's files this run does
// not write are removed.
void WriteSearchOutputs(const SearchResults& results, const OutputDirectory& dir, bool plots);

}  // namespace phaze
