// results.json (schema: share/runs/README.md): every explored config with its per-model results,
// the winners, the baselines and speed-ups, the effective run config, plugin versions.
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

namespace {

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
  j["sharding"] = std::string(ToString(c.sharding));
  if (c.sharding != Sharding::kNone) {
    j["shard_group"] = ShardGroupText(c.shard_group);
    j["shard_replicas"] = c.shard_replicas;
  }
  j["precision"] = std::string(ToString(c.precision));
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
  if (c.expert_parallel > 0) j["plan"]["expert_parallel"] = c.expert_parallel;
  if (c.expert_tensor_parallel > 0) {
    j["plan"]["expert_tensor_parallel"] = c.expert_tensor_parallel;
  }
  return j;
}

namespace {

// Where SearchResultsJsonText puts the explored configs: a string no result holds.
constexpr std::string_view kExploredMark = "\x01explored\x01";

// One explored config: its arch, area, bucket, score, prune record and per-model results.
Json ExploredToJson(const ExploredConfig& e) {
  Json ej = Json::MakeObject();
  ej["rank"] = e.rank;
  ej["arch"] = e.point.arch.ToJson();
  ej["area_mm2"] = e.point.area_um2 * 1e-6;
  ej["bucket"] = e.bucket;
  ej["score"] = e.evaluation.score;
  if (const auto& p = e.evaluation.pruned) {
    Json pj = Json::MakeObject();
    pj["bound"] = p->tier == 1 ? "compute" : "placement";
    if (p->family > 0) pj["family_configs"] = p->family;
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
  return ej;
}

// Everything but the explored configs, which stand as kExploredMark.
Json SearchResultsWithoutExplored(const SearchResults& r) {
  Json j = Json::MakeObject();
  j["phaze_version"] = kVersion;
  j["complete"] = Complete(r.outcome.stop_reason);
  j["stop_reason"] = std::string(ToString(r.outcome.stop_reason));
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
  space["pruned_by_family_bound"] = r.outcome.pruned_by_family;
  space["partially_pruned"] = r.outcome.partially_pruned;
  if (r.seed.config >= 0) {  // the config pruning started from, and its score
    Json seed = Json::MakeObject();
    seed["rank"] = r.seed.config;
    seed["arch"] = r.seed.arch;
    seed["score"] = r.seed.evaluation.score;
    space["seeded_by"] = seed;
  }
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
    bj["kind"] = std::string(ToString(b.kind));
    bj["area_mm2"] = b.area_mm2;
    bj["peak_flops"] = b.config.PeakTensorFlopsPerS();
    bj["result"] = PlanChoiceToJson(b.plan);
    baselines.Push(bj);
  }
  j["baselines"] = baselines;

  // Speed-ups over the reference (first preset; expert placement where the model gives one, else
  // the preset with phaze's placement), named per row and overall.
  Json speedups = Json::MakeObject();
  const auto designs = Designs(r);
  Json rows = Json::MakeArray();
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    Json row = Json::MakeObject();
    row["model"] = r.models[m].name;
    row["reference_samples_per_s"] = r.ReferenceThroughput(r.models[m].name);
    row["reference"] =
        r.run.arch.presets.empty() ? Json() : Json(r.ReferenceLabel(r.models[m].name));
    for (const auto& d : designs) row[d.label] = d.speedup[m] > 0 ? Json(d.speedup[m]) : Json();
    rows.Push(row);
  }
  speedups["reference"] = r.run.arch.presets.empty() ? Json() : Json(r.CommonReferenceLabel());
  speedups["per_model"] = rows;
  Json geo = Json::MakeObject();
  for (const auto& d : designs) geo[d.label] = d.geomean > 0 ? Json(d.geomean) : Json();
  speedups["geomean"] = geo;
  j["speedups"] = speedups;

  j["explored"] = Json(std::string(kExploredMark));  // SearchResultsJsonText streams it

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

  if (r.hysteresis) {
    const HysteresisComparison& h = *r.hysteresis;
    const auto& explored = r.outcome.explored;
    auto config = [&](int i) {
      return i < 0 ? Json() : Json(explored[static_cast<std::size_t>(i)].point.arch.name);
    };
    Json hj = Json::MakeObject();
    hj["level"] = h.level;
    hj["converged"] = h.converged;
    hj["visited"] = h.visited;
    hj["evaluated_now"] = h.evaluated_now;
    hj["common"] = config(h.best_common);
    hj["score"] = h.score;
    hj["optimum_score"] = r.best_common >= 0
                              ? Json(explored[static_cast<std::size_t>(r.best_common)].evaluation.score)
                              : Json();
    Json per = Json::MakeArray();
    for (std::size_t m = 0; m < h.best_per_model.size(); ++m) {
      Json x = Json::MakeObject();
      x["model"] = r.models[m].name;
      x["config"] = config(h.best_per_model[m]);
      x["score"] = h.model_scores[m];
      const int opt = r.best_per_model[m];
      x["optimum_score"] =
          opt >= 0 ? Json(explored[static_cast<std::size_t>(opt)].evaluation.models[m].score) : Json();
      per.Push(x);
    }
    hj["per_model"] = per;
    j["hysteresis_comparison"] = hj;
  }

  // Wall times: the only part that differs between runs of the same inputs.
  Json& t = j["timings"];
  t["prepare_s"] = r.timings.prepare_s;
  t["search_s"] = r.timings.search_s;
  t["baselines_s"] = r.timings.baselines_s;
  t["robustness_s"] = r.timings.robustness_s;
  t["hysteresis_s"] = r.timings.hysteresis_s;
  t["seed_s"] = r.timings.seed_s;
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

}  // namespace

Json SearchResultsToJson(const SearchResults& r) {
  Json j = SearchResultsWithoutExplored(r);
  Json explored = Json::MakeArray();
  for (const auto& e : r.outcome.explored) explored.Push(ExploredToJson(e));
  j["explored"] = explored;
  return j;
}

void WriteSearchResultsJson(std::ostream& os, const SearchResults& r, int indent) {
  // The explored configs (tens of thousands in an exhaustive search, most of the document) are
  // written one at a time into the text of the rest: the document is never whole in memory.
  const std::string rest = SearchResultsWithoutExplored(r).Dump(indent);
  std::string mark = "\"";
  mark += JsonEscape(std::string(kExploredMark));
  mark += '"';
  const std::size_t at = rest.find(mark);
  if (at == std::string::npos) throw Error("results.json: the explored configs' place is missing");
  os.write(rest.data(), static_cast<std::streamsize>(at));
  std::string out;
  auto newline = [&](int depth) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<std::size_t>(indent * depth), ' ');
  };
  if (r.outcome.explored.empty()) {
    out += "[]";
  } else {
    out += '[';
    for (std::size_t k = 0; k < r.outcome.explored.size(); ++k) {
      if (k) out += ',';
      newline(2);
      ExploredToJson(r.outcome.explored[k]).DumpTo(out, indent, 2);
      os << out;
      out.clear();
    }
    newline(1);
    out += ']';
  }
  os << out;
  os.write(rest.data() + at + mark.size(),
           static_cast<std::streamsize>(rest.size() - at - mark.size()));
}

std::string SearchResultsJsonText(const SearchResults& r, int indent) {
  std::ostringstream out;
  WriteSearchResultsJson(out, r, indent);
  return out.str();
}

}  // namespace phaze
