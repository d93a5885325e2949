// report.md: the paper's Table 1, Figure 4 as a table, Table 3's MFU, and what the run found.
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

#include "report_tables.hpp"

namespace phaze {

using namespace report;

std::string SearchReportMarkdown(const SearchResults& r) {
  std::ostringstream md;
  const auto& explored = r.outcome.explored;
  md << "# Phaze search report\n\n"
     << "Run config `" << r.run.source << "`; space `" << r.space_name << "`: " << explored.size()
     << " of " << r.outcome.candidates
     << " configs explored by decreasing area (stop: " << ToString(r.outcome.stop_reason) << ")";
  if (r.outcome.pruned + r.outcome.partially_pruned > 0) {
    md << ", of which " << r.outcome.pruned << " were pruned by upper bounds ("
       << r.outcome.pruned_by_compute_bound << " by the compute bound, "
       << r.outcome.pruned_by_placement_bound << " by the placement bound; "
       << r.outcome.pruned_by_family << " of them by the bounds of their family, the configs "
          "sharing their tensor cores) and "
       << r.outcome.partially_pruned << " evaluated for some models only: what was pruned cannot beat "
       << (r.run.search.prune == PruneMode::kPareto ? "a config of no larger area"
                                                    : "a config evaluated")
       << ", so the winners"
       << (r.run.search.prune == PruneMode::kPareto ? " and Pareto fronts" : "")
       << " are those of evaluating every config";
  }
  md << "; area budget "
     << FormatNumber("%.3f", r.area_budget_mm2) << " mm²; " << r.run.cluster.num_accelerators
     << " accelerators, global batch " << r.run.training.global_batch << "; solver "
     << r.solver_version << ".\n\n";

  md << "## Architectures (the paper's Table 1)\n\n"
     << "| model | design | TC (n×x×y) | VC (n×lanes) | GLB MiB | area mm² | samples/s | W/device "
        "| samples/s/W | J/token | $/M tokens | plan {p,d,t} | b | recompute | HBM GiB |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  auto row = [&](const std::string& model, const std::string& design, const ArchConfig& a,
                 double area_mm2, const PlanChoice& c) {
    md << "| " << model << " | " << design << " | " << a.num_tc << "×" << a.pe_x << "×" << a.pe_y
       << " | " << a.num_vc << "×" << a.pe_vc << " | " << (a.glb_bytes >> 20) << " | "
       << FormatNumber("%.2f", area_mm2) << " | "
       << (c.feasible ? FormatNumber("%.4g", c.plan.throughput_samples_per_s) : "infeasible")
       << " | " << (c.feasible ? FormatNumber("%.4g", c.power_w) : "") << " | "
       << (c.feasible && c.power_w > 0 ? FormatNumber("%.4g", c.Throughput() / c.power_w) : "")
       << " | " << (c.feasible ? FormatNumber("%.4g", c.energy_per_token_j) : "") << " | "
       << (c.feasible ? FormatNumber("%.4g", c.usd_per_million_tokens) : "") << " | " << PlanText(c) << " | " << (c.feasible ? std::to_string(c.micro_batch) : "")
       << " | " << (c.feasible ? std::string(ToString(c.recompute)) : std::string()) << " | "
       << (c.feasible ? FormatNumber("%g", c.hbm_gib) : "") << " |\n";
  };
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    const std::string& name = r.models[m].name;
    if (r.best_per_model[m] >= 0) {
      const auto& e = explored[r.best_per_model[m]];
      row(name, "Phaze per-model", e.point.arch, e.point.area_um2 * 1e-6,
          e.evaluation.models[m].best);
    }
    if (r.best_common >= 0) {
      const auto& e = explored[r.best_common];
      row(name, "Phaze common", e.point.arch, e.point.area_um2 * 1e-6, e.evaluation.models[m].best);
    }
    for (const auto& b : r.baselines) {
      if (b.model != name) continue;
      row(name, b.arch + (b.kind == BaselineKind::kExpert ? " expert" : " + Phaze DP"), b.config,
          b.area_mm2, b.plan);
    }
  }

  const auto designs = Designs(r);
  const std::string reference = r.CommonReferenceLabel();
  md << "\n## Speed-up over "
     << (r.run.arch.presets.empty() ? "-"
         : reference == "per model" ? r.run.arch.presets.front() +
                                          " (expert placement where a model gives one, else "
                                          "phaze's placement)"
         : reference.ends_with(" expert")
             ? r.run.arch.presets.front() + " with expert placement (the paper's Figure 4)"
             : r.run.arch.presets.front() + " with phaze's placement (no expert placement given)")
     << "\n\n| model |";
  for (const auto& d : designs) md << " " << d.label << " |";
  md << "\n|---|";
  for (std::size_t d = 0; d < designs.size(); ++d) md << "---|";
  md << "\n";
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    md << "| " << r.models[m].name << " |";
    for (const auto& d : designs) {
      md << " " << (d.speedup[m] > 0 ? FormatNumber("%.2f×", d.speedup[m]) : "–") << " |";
    }
    md << "\n";
  }
  md << "| **geomean** |";
  for (const auto& d : designs)
    md << " " << (d.geomean > 0 ? FormatNumber("**%.2f×**", d.geomean) : "–") << " |";
  md << "\n\n";

  md << "## Model FLOPs utilisation (the paper's Table 3)\n\n"
     << "MFU = tokens/s × model FLOPs per token / (accelerators × peak tensor FLOP/s); model FLOPs "
        "are the forward and backward GEMMs, attention included (PaLM, appendix B).\n\n"
     << "| model | FLOPs/token |";
  for (const auto& b : r.run.arch.presets) md << " " << b << " expert | " << b << " + Phaze DP |";
  md << " Phaze per-model | Phaze common |\n|---|---|";
  for (std::size_t k = 0; k < r.run.arch.presets.size(); ++k) md << "---|---|";
  md << "---|---|\n";
  auto mfu = [](const PlanChoice& c) {
    return c.feasible ? FormatNumber("%.1f%%", 100 * c.mfu) : "–";
  };
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    const std::string& name = r.models[m].name;
    md << "| " << name << " | " << FormatNumber("%.3g", r.models[m].flops_per_token) << " |";
    for (const auto& preset : r.run.arch.presets) {
      std::string ex = "–", dp = "–";
      for (const auto& b : r.baselines) {
        if (b.arch != preset || b.model != name) continue;
        (b.kind == BaselineKind::kExpert ? ex : dp) = mfu(b.plan);
      }
      md << " " << ex << " | " << dp << " |";
    }
    md << " "
       << (r.best_per_model[m] >= 0
               ? mfu(explored[r.best_per_model[m]].evaluation.models[m].best)
               : "–")
       << " | "
       << (r.best_common >= 0 ? mfu(explored[r.best_common].evaluation.models[m].best) : "–")
       << " |\n";
  }

  // The Pareto fronts: each model's and the common score's, smallest area first. The models'
  // fronts are in samples/s, the common one in the objective's unit.
  const std::string unit(ObjectiveUnit(r.run.search.objective));
  const std::string scores =
      unit == "samples/s" ? unit : "samples/s; the common front's scores in " + unit;
  md << "\n## Throughput against area: Pareto front of the explored configs\n\n"
     << (ParetoFrontsExact(r)
             ? "Exact: the fronts of every config of the space.\n\n"
             : "Of the configs evaluated exactly (the search did not evaluate every "
               "config, or pruned with `prune: winners`): other configs may lie "
               "on the true fronts.\n\n")
     << "A config is on a front when no explored config gives as much throughput (" << scores
     << ") with less area.\n\n| front | configs (area mm²: " << scores << ") |\n|---|---|\n";
  for (int m = -1; m < static_cast<int>(r.models.size()); ++m) {
    md << "| " << (m < 0 ? "common (" + std::string(ToString(r.run.search.mean)) + " mean)" : r.models[m].name) << " | ";
    bool first = true;
    for (std::size_t i : ExploredFront(r, m)) {
      const auto& e = explored[i];
      md << (first ? "" : "; ") << e.point.arch.name << " ("
         << FormatNumber("%.2f", e.point.area_um2 * 1e-6) << ": "
         << FormatNumber("%.4g",
                         m < 0 ? e.evaluation.score : e.evaluation.models[m].best.Throughput())
         << ")";
      first = false;
    }
    md << (first ? "none feasible" : "") << " |\n";
  }

  md << "\n## Throughput against power: Pareto front of the explored configs\n\n"
     << "A config is on a front when no explored config gives as much throughput (" << scores
     << ") with less average power per device (W; for the common front the mean over the "
        "models' plans)"
     << (r.run.arch.power_budget_w > 0
             ? "; power budget " + FormatNumber("%.4g", r.run.arch.power_budget_w) + " W per device"
             : std::string())
     << ".\n\n| front | configs (W: " << scores << ") |\n|---|---|\n";
  for (int m = -1; m < static_cast<int>(r.models.size()); ++m) {
    md << "| " << (m < 0 ? std::string("common") : r.models[m].name) << " | ";
    bool first = true;
    for (std::size_t i : ExploredPowerFront(r, m)) {
      const auto& e = explored[i];
      md << (first ? "" : "; ") << e.point.arch.name << " ("
         << FormatNumber("%.4g", m < 0 ? e.evaluation.MeanPowerW()
                                       : e.evaluation.models[m].best.power_w)
         << ": "
         << FormatNumber("%.4g",
                         m < 0 ? e.evaluation.score : e.evaluation.models[m].best.Throughput())
         << ")";
      first = false;
    }
    md << (first ? "none feasible" : "") << " |\n";
  }

  if (r.best_common >= 0 && r.run.training.hbm_gib.size() > 1) {
    md << "\n## HBM size on the common winner (samples/s)\n\n| model |";
    for (double h : r.run.training.hbm_gib) md << " " << FormatNumber("%g", h) << " GiB |";
    md << "\n|---|";
    for (std::size_t k = 0; k < r.run.training.hbm_gib.size(); ++k) md << "---|";
    md << "\n";
    for (const auto& m : explored[r.best_common].evaluation.models) {
      md << "| " << m.model << " |";
      for (const auto& c : m.best_per_hbm) {
        md << " "
           << (c.feasible ? FormatNumber("%.4g", c.plan.throughput_samples_per_s) : "infeasible")
           << " |";
      }
      md << "\n";
    }
  }
  if (r.winner_schedule) {
    const auto& w = *r.winner_schedule;
    md << "\n## Main layer schedule\n\n"
       << w.title << ": makespan " << FormatNumber("%.2f", w.result.makespan_s * 1e6)
       << " µs against " << FormatNumber("%.2f", w.problem.SequentialMakespan() * 1e6)
       << " µs with every op intra-op in sequence (" << ToString(w.result.stats.path)
       << ", " << SolveStatusName(w.result.stats.status) << ").\n";
  }
  if (r.hysteresis) {
    const HysteresisComparison& h = *r.hysteresis;
    const auto& explored = r.outcome.explored;
    auto name = [&](int i) {
      return i < 0 ? std::string("none feasible") : explored[static_cast<std::size_t>(i)].point.arch.name;
    };
    auto gap = [](double found, double optimum) {
      return optimum > 0 ? FormatNumber("%+.1f%%", 100 * (found / optimum - 1)) : std::string("—");
    };
    md << "\n## The paper's hysteresis beside the optimum\n\n"
       << "The hysteresis search (level " << h.level << ", the paper's heuristic) "
       << (h.converged ? "would have stopped after " : "would not have stopped: it visits all ")
       << h.visited << " of " << r.outcome.candidates
       << " configs (replayed on this search's results: " << h.evaluated_now
       << " pruned configs evaluated exactly for it).\n\n"
       << "| | hysteresis | score | optimum | score | gap |\n|---|---|---|---|---|---|\n";
    const double optimum = r.best_common >= 0 ? explored[r.best_common].evaluation.score : 0;
    md << "| common (" << ToString(r.run.search.mean) << " mean) | " << name(h.best_common) << " | "
       << FormatNumber("%.4g", h.score) << " | " << name(r.best_common) << " | "
       << FormatNumber("%.4g", optimum) << " | " << gap(h.score, optimum) << " |\n";
    for (std::size_t m = 0; m < h.best_per_model.size(); ++m) {
      const int opt = r.best_per_model[m];
      const double o = opt >= 0 ? explored[opt].evaluation.models[m].score : 0;
      md << "| " << r.models[m].name << " | " << name(h.best_per_model[m]) << " | "
         << FormatNumber("%.4g", h.model_scores[m]) << " | " << name(opt) << " | "
         << FormatNumber("%.4g", o) << " | " << gap(h.model_scores[m], o) << " |\n";
    }
    md << "\nScores in " << ObjectiveUnit(r.run.search.objective) << ".\n";
  }
  if (!r.robustness.rows.empty()) {
    const RobustnessStudy& st = r.robustness;
    md << "\n## Robustness of the recommendation (device model parameters ±10%)\n\n"
       << "Each fitted technology parameter scaled on every chip; the " << st.candidates
       << " best configs by common score and the reference re-evaluated. Unperturbed: "
       << st.winner << ", " << FormatNumber("%.2f", st.base_speedup)
       << "× geomean speed-up.\n\n| parameter | factor | common winner | changed | speed-up | "
          "moved |\n|---|---|---|---|---|---|\n";
    for (const auto& row : st.rows) {
      md << "| " << row.parameter << " | " << FormatNumber("%.1f", row.factor) << " | "
         << row.winner << " | " << (row.winner_changed ? "yes" : "no") << " | "
         << FormatNumber("%.2f", row.speedup) << "× | "
         << FormatNumber("%+.1f%%", 100 * (row.speedup / st.base_speedup - 1)) << " |\n";
    }
    if (!st.skipped.empty()) md << "\n" << st.skipped << ".\n";
  }
  md << "\n";
  if (r.run.output.plots) {  // the files WriteSearchOutputs writes (output.plots: false, none)
    md << "Plots: `throughput-vs-area.svg`, `throughput-vs-power.svg`, `pipeline.svg`, `memory.svg`"
       << (r.winner_schedule ? ", `schedule.svg`" : "") << ". ";
  }
  md << "All figures: `results.json`; one row per explored config and model: `explored.csv`.\n";
  return md.str();
}

}  // namespace phaze
