#include "report_tables.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "phaze/search/pareto_front.hpp"

namespace phaze::report {

std::string PlanText(const PlanChoice& c) {
  if (!c.feasible) return "infeasible";
  // The strategy is named when it splits anything (t > 1, or experts over e > 1 devices), and
  // the moe strategy's expert-parallel size when it is not t, and ETP when its experts are split.
  const std::int64_t t = c.plan.tensor_parallel, e = c.expert_parallel;
  const bool split = c.expert_tensor_parallel > 1;
  std::string strategy;
  if ((t > 1 || e > 1) && !c.strategy.empty()) strategy = " " + c.strategy;
  if (e > 0 && (e != t || split)) strategy += " EP " + std::to_string(e);
  if (split) strategy += " ETP " + std::to_string(c.expert_tensor_parallel);
  return "{p " + std::to_string(c.plan.pipeline_stages) + ", d " +
         std::to_string(c.plan.data_parallel) + ", t " + std::to_string(t) + strategy + "}";
}

std::string ArchText(const ArchConfig& a) {
  return std::to_string(a.num_tc) + "×" + std::to_string(a.pe_x) + "×" + std::to_string(a.pe_y) +
         " TC, " + std::to_string(a.num_vc) + "×" + std::to_string(a.pe_vc) + " VC, GLB " +
         std::to_string(a.glb_bytes >> 20) + " MiB";
}

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

bool ParetoFrontsExact(const SearchResults& r) {
  return r.run.search.mode == SearchMode::kExhaustive && r.run.search.prune != PruneMode::kWinners &&
         r.outcome.stop_reason == StopReason::kExhausted;
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
    const std::string label = name + (b.kind == BaselineKind::kExpert ? " expert" : " + Phaze DP");
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

}  // namespace phaze::report
