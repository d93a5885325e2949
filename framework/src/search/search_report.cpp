#include "phaze/search/search_report.hpp"

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
#include "phaze/search/search_plots.hpp"
#include "phaze/version.hpp"

namespace phaze {
namespace {


std::string PlanText(const PlanChoice& c) {
  if (!c.feasible) return "infeasible";
  // The strategy is named when it splits anything (t > 1).
  return "{p " + std::to_string(c.plan.pipeline_stages) + ", d " +
         std::to_string(c.plan.data_parallel) + ", t " + std::to_string(c.plan.tensor_parallel) +
         (c.plan.tensor_parallel > 1 && !c.strategy.empty() ? " " + c.strategy : "") + "}";
}

std::string ArchText(const ArchConfig& a) {
  return std::to_string(a.num_tc) + "×" + std::to_string(a.pe_x) + "×" + std::to_string(a.pe_y) +
         " TC, " + std::to_string(a.num_vc) + "×" + std::to_string(a.pe_vc) + " VC, GLB " +
         std::to_string(a.glb_bytes >> 20) + " MiB";
}

// Geometric mean of the positive values (0 when none).
double GeoMean(const std::vector<double>& v) {
  double s = 0;
  int n = 0;
  for (double x : v) {
    if (x > 0) {
      s += std::log(x);
      ++n;
    }
  }
  return n ? std::exp(s / n) : 0;
}

// The explored configs on the throughput-vs-area front of `model` (−1: the common score).
// Whether the fronts are those of the whole space: every config visited, and evaluated or pruned as
// dominated (exhaustive mode with `prune: pareto` or `none`).
bool ParetoFrontsExact(const SearchResults& r) {
  return r.run.search.mode == SearchMode::kExhaustive && r.run.search.prune != PruneMode::kWinners &&
         r.outcome.stop_reason == "exhausted";
}

std::vector<std::size_t> ExploredFront(const SearchResults& r, int model) {
  std::vector<double> area, throughput;
  for (const auto& e : r.outcome.explored) {
    area.push_back(e.point.area_um2 * 1e-6);
    throughput.push_back(model < 0 ? e.evaluation.score
                                   : e.evaluation.models[model].best.Throughput());
  }
  return ParetoFront(area, throughput);
}

// The explored configs on the throughput-vs-power front of `model` (−1: the common score against
// the mean power of the models' plans).
std::vector<std::size_t> ExploredPowerFront(const SearchResults& r, int model) {
  std::vector<double> power, score;
  for (const auto& e : r.outcome.explored) {
    const double w = model < 0 ? e.evaluation.MeanPowerW() : e.evaluation.models[model].best.power_w;
    power.push_back(w > 0 ? w : std::numeric_limits<double>::infinity());
    score.push_back(w > 0 ? (model < 0 ? e.evaluation.score
                                       : e.evaluation.models[model].best.Throughput())
                          : 0.0);
  }
  return ParetoFront(power, score);
}

// One column of the speed-up table: a label, the throughput per model and the speed-up over the
// reference per model (0 = none), and the geometric mean of those speed-ups.
struct Design {
  std::string label;
  std::vector<double> throughput;
  std::vector<double> speedup;
  double geomean = 0;
};

std::vector<Design> Designs(const SearchResults& r) {
  std::vector<Design> out;
  const std::size_t n = r.models.size();
  std::vector<std::string> order;  // baseline labels in first-seen order
  std::map<std::string, Design> by_label;
  for (const auto& b : r.baselines) {
    // Per-model presets (Spotlight) share one column per kind.
    const bool global = std::find(r.run.arch.presets.begin(), r.run.arch.presets.end(), b.arch) !=
                        r.run.arch.presets.end();
    std::string name = global ? b.arch : b.arch.substr(0, b.arch.find('-'));
    const std::string label = name + (b.kind == "expert" ? " expert" : " + Phaze DP");
    if (!by_label.count(label)) {
      order.push_back(label);
      by_label[label] = {label, std::vector<double>(n, 0), {}, 0};
    }
    for (std::size_t m = 0; m < n; ++m) {
      if (r.models[m].name == b.model) by_label[label].throughput[m] = b.plan.Throughput();
    }
  }
  for (const auto& l : order) out.push_back(by_label[l]);
  Design per_model{"Phaze per-model", std::vector<double>(n, 0), {}, 0};
  Design common{"Phaze common", std::vector<double>(n, 0), {}, 0};
  for (std::size_t m = 0; m < n; ++m) {
    if (r.best_per_model[m] >= 0) {
      per_model.throughput[m] =
          r.outcome.explored[r.best_per_model[m]].evaluation.models[m].best.Throughput();
    }
    if (r.best_common >= 0) {
      common.throughput[m] = r.outcome.explored[r.best_common].evaluation.models[m].best.Throughput();
    }
  }
  out.push_back(per_model);
  out.push_back(common);
  for (auto& d : out) {
    for (std::size_t m = 0; m < n; ++m) {
      const double ref = r.ReferenceThroughput(r.models[m].name), v = d.throughput[m];
      d.speedup.push_back(ref > 0 && v > 0 ? v / ref : 0);
    }
    d.geomean = GeoMean(d.speedup);
  }
  return out;
}

Json WinnerJson(const SearchResults& r, int index, int model) {
  Json w = Json::MakeObject();
  const auto& e = r.outcome.explored[index];
  w["rank"] = e.rank;
  w["arch"] = e.point.arch.ToJson();
  w["area_mm2"] = e.point.area_um2 * 1e-6;
  w["area_share_of_budget"] = e.point.area_um2 * 1e-6 / r.area_budget_mm2;
  w["peak_flops"] = e.point.arch.PeakTensorFlopsPerS();
  if (model >= 0) {
    w["result"] = PlanChoiceToJson(e.evaluation.models[model].best);
  } else {
    w["score"] = e.evaluation.score;
    Json per = Json::MakeArray();
    for (const auto& m : e.evaluation.models) {
      Json j = PlanChoiceToJson(m.best);
      j["model"] = m.model;
      per.Push(j);
    }
    w["results"] = per;
  }
  return w;
}

}  // namespace

Json PlanChoiceToJson(const PlanChoice& c) {
  Json j = Json::MakeObject();
  j["feasible"] = c.feasible;
  if (!c.feasible) {
    j["reason"] = c.reason;
    return j;
  }
  j["throughput_samples_per_s"] = c.plan.throughput_samples_per_s;
  j["throughput_tokens_per_s"] = c.tokens_per_s;
  j["time_per_batch_s"] = c.plan.time_per_batch_s;
  j["mfu"] = c.mfu;
  // Energy and cost (DESIGN §11): per device the plan uses, per step of the cluster, per token.
  j["power_w"] = c.power_w;
  j["energy_per_iteration_j"] = c.plan.energy.TotalJ();
  const Energy& e = c.plan.energy;
  Json parts = Json::MakeObject();
  parts["compute_j"] = e.compute_j;
  parts["on_chip_j"] = e.on_chip_j;
  parts["memory_j"] = e.memory_j;
  parts["network_j"] = e.network_j;
  parts["static_j"] = e.static_j;
  j["energy_per_iteration_by_part"] = parts;
  j["energy_per_token_j"] = c.energy_per_token_j;
  j["energy_per_sample_j"] = c.EnergyPerSampleJ();
  j["devices_used"] = c.plan.devices;
  j["hourly_usd_per_device"] = c.hourly_usd;
  j["usd_per_million_tokens"] = c.usd_per_million_tokens;
  if (c.time_to_train_s > 0) j["time_to_train_s"] = c.time_to_train_s;
  j["micro_batch"] = c.micro_batch;
  j["recompute"] = std::string(ToString(c.recompute));
  j["hbm_gib"] = c.hbm_gib;
  // The choice keeps the names of its stages' first and last layers: enough for the plan writer.
  std::vector<std::string> names;
  for (std::size_t k = 0; k < c.plan.stages.size() && k < c.stages.size(); ++k) {
    const StagePlan& s = c.plan.stages[k];
    names.resize(std::max(names.size(), static_cast<std::size_t>(s.last_layer) + 1));
    names[static_cast<std::size_t>(s.first_layer)] = c.stages[k].first_layer;
    names[static_cast<std::size_t>(s.last_layer)] = c.stages[k].last_layer;
  }
  j["plan"] = PlacementPlanToJson(c.plan, names);
  j["plan"]["strategy"] = c.strategy;
  return j;
}

Json SearchResultsToJson(const SearchResults& r) {
  Json j = Json::MakeObject();
  j["phaze_version"] = kVersion;
  j["complete"] = r.outcome.stop_reason == "converged" || r.outcome.stop_reason == "exhausted";
  j["stop_reason"] = r.outcome.stop_reason;
  j["run_config"] = r.run.ToJson();
  Json plugins = Json::MakeArray();
  for (const auto& p : r.plugins) {
    Json pj = Json::MakeObject();
    pj["name"] = p.name;
    pj["version"] = p.version;
    plugins.Push(pj);
  }
  j["plugins"] = plugins;
  j["solver"] = r.solver_version;
  Json& space = j["space"];
  space["name"] = r.space_name;
  space["candidates"] = r.outcome.candidates;
  space["explored"] = static_cast<std::int64_t>(r.outcome.explored.size());
  space["buckets_done"] = r.outcome.buckets_done;
  // Exhaustive mode's pruning (arch_search.hpp): configs visited but not evaluated exactly.
  space["prune"] = r.run.search.mode == SearchMode::kExhaustive ? ToString(r.run.search.prune)
                                                                 : ToString(PruneMode::kNone);
  space["pruned"] = r.outcome.pruned;
  space["pruned_by_compute_bound"] = r.outcome.pruned_by_compute_bound;
  space["pruned_by_placement_bound"] = r.outcome.pruned_by_placement_bound;
  space["partially_pruned"] = r.outcome.partially_pruned;
  space["area_budget_mm2"] = r.area_budget_mm2;
  Json bucket_best = Json::MakeArray();
  for (double v : r.outcome.bucket_best) bucket_best.Push(v);
  space["bucket_best"] = bucket_best;

  Json models = Json::MakeArray();
  for (const auto& m : r.models) {
    Json mj = Json::MakeObject();
    mj["name"] = m.name;
    mj["file"] = m.file;
    mj["parameters"] = m.parameters;
    mj["sequence_length"] = m.sequence_length;
    mj["flops_per_token"] = m.flops_per_token;
    Json refused = Json::MakeArray();
    for (const auto& x : m.refused) refused.Push(x);
    mj["refused_widths"] = refused;
    models.Push(mj);
  }
  j["models"] = models;

  Json& winners = j["winners"];
  Json per_model = Json::MakeArray();
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    Json w = r.best_per_model[m] >= 0 ? WinnerJson(r, r.best_per_model[m], static_cast<int>(m))
                                      : Json::MakeObject();
    w["model"] = r.models[m].name;
    if (r.best_per_model[m] < 0) w["reason"] = "no explored config is feasible for this model";
    per_model.Push(w);
  }
  winners["per_model"] = per_model;
  winners["common"] = r.best_common >= 0 ? WinnerJson(r, r.best_common, -1) : Json();
  winners["mean"] = ToString(r.run.search.mean);

  // Throughput-vs-area Pareto fronts of the explored configs, as indices into `explored`.
  Json pareto = Json::MakeObject();
  auto front_json = [&](int model) {
    Json ranks = Json::MakeArray();
    for (std::size_t i : ExploredFront(r, model)) ranks.Push(static_cast<std::int64_t>(i));
    return ranks;
  };
  pareto["exact"] = ParetoFrontsExact(r);  // else: of the configs evaluated exactly
  pareto["common"] = front_json(-1);
  Json pareto_models = Json::MakeArray();
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    Json pm = Json::MakeObject();
    pm["model"] = r.models[m].name;
    pm["configs"] = front_json(static_cast<int>(m));
    pareto_models.Push(pm);
  }
  pareto["per_model"] = pareto_models;
  j["pareto_front"] = pareto;
  // The same against average power per device (ExploredPowerFront).
  Json power = Json::MakeObject();
  Json power_common = Json::MakeArray();
  for (std::size_t i : ExploredPowerFront(r, -1)) power_common.Push(static_cast<std::int64_t>(i));
  power["common"] = power_common;
  Json power_models = Json::MakeArray();
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    Json pm = Json::MakeObject();
    pm["model"] = r.models[m].name;
    Json ranks = Json::MakeArray();
    for (std::size_t i : ExploredPowerFront(r, static_cast<int>(m))) {
      ranks.Push(static_cast<std::int64_t>(i));
    }
    pm["configs"] = ranks;
    power_models.Push(pm);
  }
  power["per_model"] = power_models;
  j["power_front"] = power;

  Json baselines = Json::MakeArray();
  for (const auto& b : r.baselines) {
    Json bj = Json::MakeObject();
    bj["arch"] = b.arch;
    bj["model"] = b.model;
    bj["kind"] = b.kind;
    bj["area_mm2"] = b.area_mm2;
    bj["peak_flops"] = b.config.PeakTensorFlopsPerS();
    bj["result"] = PlanChoiceToJson(b.plan);
    baselines.Push(bj);
  }
  j["baselines"] = baselines;

  // Speed-ups over the reference (first preset, expert placement).
  Json speedups = Json::MakeObject();
  const auto designs = Designs(r);
  Json rows = Json::MakeArray();
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    Json row = Json::MakeObject();
    row["model"] = r.models[m].name;
    row["reference_samples_per_s"] = r.ReferenceThroughput(r.models[m].name);
    for (const auto& d : designs) row[d.label] = d.speedup[m] > 0 ? Json(d.speedup[m]) : Json();
    rows.Push(row);
  }
  speedups["reference"] =
      r.run.arch.presets.empty() ? Json() : Json(r.run.arch.presets.front() + " expert");
  speedups["per_model"] = rows;
  Json geo = Json::MakeObject();
  for (const auto& d : designs) geo[d.label] = d.geomean > 0 ? Json(d.geomean) : Json();
  speedups["geomean"] = geo;
  j["speedups"] = speedups;

  Json explored = Json::MakeArray();
  for (const auto& e : r.outcome.explored) {
    Json ej = Json::MakeObject();
    ej["rank"] = e.rank;
    ej["arch"] = e.point.arch.ToJson();
    ej["area_mm2"] = e.point.area_um2 * 1e-6;
    ej["bucket"] = e.bucket;
    ej["score"] = e.evaluation.score;
    if (const auto& p = e.evaluation.pruned) {
      Json pj = Json::MakeObject();
      pj["bound"] = p->tier == 1 ? "compute" : "placement";
      Json bounds = Json::MakeArray(), incumbent = Json::MakeArray();
      for (double b : p->model_bounds) bounds.Push(b);
      for (double b : p->incumbent.throughputs) incumbent.Push(b);
      pj["upper_bounds"] = bounds;
      pj["score_upper_bound"] = p->score_bound;
      pj["incumbent_throughputs"] = incumbent;
      pj["incumbent_score"] = p->incumbent.score;
      ej["pruned"] = pj;
    }
    Json ms = Json::MakeArray();
    for (const auto& m : e.evaluation.models) {
      Json mj = Json::MakeObject();
      mj["model"] = m.model;
      if (m.pruned) {  // only why (exhaustive searches keep tens of thousands of these)
        mj["pruned"] = true;
        mj["reason"] = m.best.reason;
        ms.Push(mj);
        continue;
      }
      mj["best"] = PlanChoiceToJson(m.best);
      Json hbm = Json::MakeArray();
      for (const auto& c : m.best_per_hbm) {
        hbm.Push(c.feasible ? Json(c.plan.throughput_samples_per_s) : Json());
      }
      mj["best_throughput_per_hbm"] = hbm;
      mj["schedules_by_ilp"] = m.ilp_answers;
      mj["schedules_by_fast_path"] = m.fast_answers;
      mj["max_schedule_gap"] = m.max_gap;
      ms.Push(mj);
    }
    ej["models"] = ms;
    explored.Push(ej);
  }
  j["explored"] = explored;

  if (r.winner_schedule) {
    Json s = ScheduleToJson(r.winner_schedule->problem, r.winner_schedule->result);
    s["title"] = r.winner_schedule->title;
    if (s.Find("stats")) s["stats"]["solve_time_s"] = Json();  // a timing
    j["winner_schedule"] = s;
  }

  {
    const RobustnessStudy& st = r.robustness;
    Json rj = Json::MakeObject();
    rj["candidates"] = st.candidates;
    rj["winner"] = st.winner.empty() ? Json() : Json(st.winner);
    rj["speedup"] = st.base_speedup > 0 ? Json(st.base_speedup) : Json();
    Json rows = Json::MakeArray();
    for (const auto& row : st.rows) {
      Json x = Json::MakeObject();
      x["parameter"] = row.parameter;
      x["factor"] = row.factor;
      x["winner"] = row.winner;
      x["winner_changed"] = row.winner_changed;
      x["speedup"] = row.speedup > 0 ? Json(row.speedup) : Json();
      x["speedup_change"] =
          row.speedup > 0 && st.base_speedup > 0 ? Json(row.speedup / st.base_speedup - 1) : Json();
      rows.Push(x);
    }
    rj["perturbations"] = rows;
    rj["skipped"] = st.skipped.empty() ? Json() : Json(st.skipped);
    j["robustness"] = rj;
  }

  // Wall times: the only part that differs between runs of the same inputs.
  Json& t = j["timings"];
  t["prepare_s"] = r.timings.prepare_s;
  t["search_s"] = r.timings.search_s;
  t["baselines_s"] = r.timings.baselines_s;
  t["robustness_s"] = r.timings.robustness_s;
  t["total_s"] = r.timings.total_s;
  t["processes"] = r.timings.processes;  // MPI ranks
  t["threads"] = r.timings.threads;      // evaluation threads per process
  double schedule_s = 0, placement_s = 0;
  Json per_config = Json::MakeArray();
  for (const auto& e : r.outcome.explored) {
    per_config.Push(e.evaluation.seconds);
    for (const auto& m : e.evaluation.models) {
      schedule_s += m.schedule_seconds;
      placement_s += m.placement_seconds;
    }
  }
  t["estimate_and_schedule_s"] = schedule_s;
  t["placement_s"] = placement_s;
  t["per_config_s"] = per_config;
  if (r.winner_schedule) t["winner_schedule_solve_s"] = r.winner_schedule->result.stats.solve_time_s;
  // The segment memo (schedule_cache.hpp): how often a config found a schedule or bound another
  // had computed. Depends on the order threads take configs, hence here.
  Json& c = t["schedule_cache"];
  const ScheduleCacheStats& cs = r.schedule_cache;
  c["schedule_hits"] = cs.hits;
  c["schedule_misses"] = cs.misses;
  c["schedule_hit_rate"] = cs.HitRate();
  c["bound_hits"] = cs.bound_hits;
  c["bound_misses"] = cs.bound_misses;
  c["bound_hit_rate"] = cs.BoundHitRate();
  c["entries"] = cs.entries;
  c["bytes"] = cs.bytes;
  c["evictions"] = cs.evictions;
  return j;
}

std::string SearchReportMarkdown(const SearchResults& r) {
  std::ostringstream md;
  const auto& explored = r.outcome.explored;
  md << "# Phaze search report\n\n"
     << "Run config `" << r.run.source << "`; space `" << r.space_name << "`: " << explored.size()
     << " of " << r.outcome.candidates
     << " configs explored by decreasing area (stop: " << r.outcome.stop_reason << ")";
  if (r.outcome.pruned + r.outcome.partially_pruned > 0) {
    md << ", of which " << r.outcome.pruned << " were pruned by upper bounds ("
       << r.outcome.pruned_by_compute_bound << " by the compute bound, "
       << r.outcome.pruned_by_placement_bound << " by the placement bound) and "
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
      row(name, b.arch + (b.kind == "expert" ? " expert" : " + Phaze DP"), b.config,
          b.area_mm2, b.plan);
    }
  }

  const auto designs = Designs(r);
  md << "\n## Speed-up over " << (r.run.arch.presets.empty() ? "-" : r.run.arch.presets.front())
     << " with expert placement (the paper's Figure 4)\n\n| model |";
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
        (b.kind == "expert" ? ex : dp) = mfu(b.plan);
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

  // The Pareto fronts: each model's and the common score's, smallest area first.
  md << "\n## Throughput against area: Pareto front of the explored configs\n\n"
     << (ParetoFrontsExact(r) ? "Exact: the fronts of every config of the space.\n\n"
                              : "Of the configs evaluated exactly (the search did not evaluate every "
                                "config, or pruned with `prune: winners`): other configs may lie "
                                "on the true fronts.\n\n")
     << "A config is on a front when no explored config gives as much throughput (samples/s) "
        "with less area.\n\n| front | configs (area mm²: samples/s) |\n|---|---|\n";
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
     << "A config is on a front when no explored config gives as much throughput (samples/s; the "
        "common score for the common front) with less average power per device (W; for the "
        "common front the mean over the models' plans)"
     << (r.run.arch.power_budget_w > 0
             ? "; power budget " + FormatNumber("%.4g", r.run.arch.power_budget_w) + " W per device"
             : std::string())
     << ".\n\n| front | configs (W: samples/s) |\n|---|---|\n";
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
  md << "\nPlots: `throughput-vs-area.svg`, `throughput-vs-power.svg`, `pipeline.svg`, `memory.svg`, `schedule.svg`. All "
        "figures: `results.json`; one row per explored config and model: `explored.csv`.\n";
  return md.str();
}

namespace {

// A CSV field (RFC 4180): quoted when it holds a comma, quote or line break.
std::string CsvField(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string ExploredCsv(const SearchResults& r) {
  std::ostringstream csv;
  csv << "config,architecture,num_tc,pe_x,pe_y,num_vc,pe_vc,glb_mib,l2_tc_kib,l2_vc_kib,area_mm2,"
         "common_score,common_winner,model,model_winner,feasible,throughput_samples_per_s,"
         "throughput_tokens_per_s,time_per_batch_s,mfu,pipeline_stages,data_parallel,"
         "tensor_parallel,virtual_stages,micro_batch,recompute,hbm_gib,bubble_share,sync_share,"
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
            << c.plan.tensor_parallel << "," << c.plan.virtual_stages << "," << c.micro_batch
            << "," << ToString(c.recompute) << "," << number(c.hbm_gib) << ","
            << number(c.plan.bubble_share) << "," << number(c.plan.sync_share) << ","
            << number(c.power_w) << "," << number(c.EnergyPerSampleJ()) << ","
            << number(c.energy_per_token_j) << "," << number(c.usd_per_million_tokens) << ","
            << number(e.evaluation.models[m].score) << ",\n";
      } else {
        csv << ",,,,,,,,,,,,,,,,,," << CsvField(c.reason) << "\n";
      }
    }
  }
  return csv.str();
}

std::string SearchSummary(const SearchResults& r) {
  std::ostringstream out;
  out << "explored " << r.outcome.explored.size() << " of " << r.outcome.candidates
      << " architectures (" << r.outcome.stop_reason << ")\n";
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
  std::vector<std::pair<std::string, std::string>> files = {
      {"results.json", SearchResultsToJson(r).Dump(1) + "\n"},
      {"report.md", SearchReportMarkdown(r)},
      {"explored.csv", ExploredCsv(r)}};
  if (plots) {
    files.emplace_back("throughput-vs-area.svg", ThroughputAreaSvg(r));
    files.emplace_back("throughput-vs-power.svg", ThroughputPowerSvg(r));
    files.emplace_back("pipeline.svg", PipelineSvg(r));
    files.emplace_back("memory.svg", MemorySvg(r));
    if (r.winner_schedule) {
      files.emplace_back("schedule.svg",
                         ScheduleToSvg(r.winner_schedule->problem, r.winner_schedule->result,
                                       r.winner_schedule->title));
    }
  }
  dir.WriteSet(files, kSearchOutputFiles);
}

}  // namespace phaze
