#include "phaze/report/search_plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <fmt/printf.h>

#include "phaze/core/svg.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/search/pareto_front.hpp"
#include "phaze/search/search_context.hpp"

namespace phaze {
namespace {


constexpr const char* kBlue = "#4e79a7";
constexpr const char* kRed = "#e15759";
constexpr const char* kOrange = "#f28e2b";
constexpr const char* kGrey = "#555555";

// Labels a marker at (x, y) on a plot `width` wide: to its right in the left part of the plot, to
// its left in the right part, so labels run into the plot rather than off it.
void MarkerLabel(SvgCanvas& svg, double x, double y, double width, const std::string& text,
                 const std::string& fill) {
  const bool left = x > width * 0.6;
  TextStyle style{11, left ? "end" : "start", fill};
  style.halo = true;  // readable over the points it may cross
  svg.Text(left ? x - 9 : x + 9, y + 4, text, style);
}

// The plan drawn for model m: the common winner's, else the model's own best.
const PlanChoice* ShownPlan(const SearchResults& r, std::size_t m) {
  const int idx = r.best_common >= 0 ? r.best_common : r.best_per_model[m];
  if (idx < 0) return nullptr;
  const PlanChoice& p = r.outcome.explored[idx].evaluation.models[m].best;
  return p.feasible ? &p : nullptr;
}

std::string PlanLine(const PlanChoice& p) {
  return "p=" + std::to_string(p.plan.pipeline_stages) +
         " d=" + std::to_string(p.plan.data_parallel) +
         " t=" + std::to_string(p.plan.tensor_parallel) + " b=" + std::to_string(p.micro_batch) +
         ", recompute " + std::string(ToString(p.recompute)) + ", HBM " +
         FormatNumber("%g", p.hbm_gib) + " GiB";
}

std::string PlotTitle(const SearchResults& r, const std::string& what) {
  return r.best_common >= 0
             ? what + " on the common winner " + r.outcome.explored[r.best_common].point.arch.name
             : what + " on each model's best architecture";
}

// Light (low) to dark (high) blue for a share in [0, 1].
std::string Shade(double share) {
  const double t = std::clamp(share, 0.0, 1.0);
  auto mix = [&](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
  std::string colour = fmt::sprintf("#%02x%02x%02x", mix(0xc6, 0x08), mix(0xdb, 0x30),
                mix(0xef, 0x6b));
  return colour;
}

}  // namespace

namespace {

// What the x axis of a score plot shows: a title, a label with its unit, the value of an explored
// config (by index) and of a baseline preset's plans (one per model), and a value the axis must
// include (the area or power budget; 0: none).
struct XAxis {
  std::string title, label, unit;
  std::function<double(std::size_t)> explored;
  std::function<double(const std::vector<const PlanChoice*>&, double area_mm2)> baseline;
  double include = 0;
};

// Explored configs' common score against `axis`, with their Pareto front (no other explored
// config has a smaller x and more throughput), the common winner and every global baseline
// preset (with our DP, scored like a config), each labelled.
std::string ScoreSvg(const SearchResults& r, const XAxis& axis) {
  const double W = 640, H = 380;  // the plot area; (0, 0) is its top left corner
  struct Point {
    double x, score;
  };
  std::vector<Point> explored;
  for (std::size_t i = 0; i < r.outcome.explored.size(); ++i) {
    explored.push_back({axis.explored(i), r.outcome.explored[i].evaluation.score});
  }
  // Every global preset with our DP, scored like a config.
  struct Baseline {
    std::string name;
    Point at;
  };
  std::vector<Baseline> baselines;
  for (const auto& preset : r.run.arch.presets) {
    std::vector<double> thr, weights;
    std::vector<const PlanChoice*> plans;
    double area = 0;
    for (const auto& m : r.models) {
      weights.push_back(m.weight);
      const PlanChoice* plan = nullptr;
      for (const auto& b : r.baselines) {
        if (b.arch == preset && b.model == m.name && b.kind == BaselineKind::kPhazeDp) {
          plan = &b.plan;
          area = b.area_mm2;
        }
      }
      plans.push_back(plan);
      thr.push_back(plan ? ObjectiveValue(*plan, r.run.search.objective,
                                          r.run.cluster.num_accelerators)
                         : 0.0);
    }
    if (area > 0) {
      baselines.push_back(
          {preset, {axis.baseline(plans, area), CommonScore(thr, weights, r.run.search.mean)}});
    }
  }
  double min_x = axis.include > 0 ? axis.include : std::numeric_limits<double>::infinity();
  double max_x = axis.include, max_score = 0;
  auto extend = [&](const Point& p) {
    if (!(p.x > 0) || !(p.score > 0)) return;
    min_x = std::min(min_x, p.x);
    max_x = std::max(max_x, p.x);
    max_score = std::max(max_score, p.score);
  };
  for (const auto& p : explored) extend(p);
  for (const auto& b : baselines) extend(b.at);
  if (!std::isfinite(min_x)) min_x = 0;
  if (max_score <= 0) max_score = 1;
  if (max_x - min_x < 1e-9) min_x = max_x * 0.9;
  if (max_x <= 0) max_x = 1;
  const std::vector<double> x_ticks = NiceTicks(min_x, max_x, 5);
  const std::vector<double> y_ticks = NiceTicks(0, max_score * 1.05, 5);
  const double x_lo = x_ticks.front(), x_hi = x_ticks.back(), y_hi = y_ticks.back();
  auto X = [&](double a) { return (a - x_lo) / (x_hi - x_lo) * W; };
  auto Y = [&](double s) { return H - s / y_hi * H; };

  SvgCanvas svg;
  svg.Text(0, -24, axis.title, {14, "start", "", false, true});
  svg.Line(0, H, W, H, "black");
  svg.Line(0, 0, 0, H, "black");
  for (double a : x_ticks) {
    svg.Line(X(a), H, X(a), H + 4, "black");
    svg.Text(X(a), H + 17, TickLabel(a), {11, "middle"});
  }
  for (double s : y_ticks) {
    svg.Line(-4, Y(s), 0, Y(s), "black");
    svg.Text(-7, Y(s) + 4, TickLabel(s), {11, "end"});
  }
  svg.Text(W / 2, H + 38, axis.label, {12, "middle"});
  const std::string unit(ObjectiveUnit(r.run.search.objective));
  const std::string score = r.models.size() > 1
                                ? "score (" + unit + ", " + std::string(ToString(r.run.search.mean)) +
                                      " mean of " + std::to_string(r.models.size()) + " models)"
                                : "score (" + unit + ")";
  svg.Text(-48, H / 2, score, {12, "middle", "", true});

  // Pareto front: configs no other explored config beats with a smaller (or equal) x.
  std::vector<double> xs, scores;
  for (const auto& p : explored) {
    xs.push_back(p.x > 0 ? p.x : std::numeric_limits<double>::infinity());
    scores.push_back(p.x > 0 ? p.score : 0.0);
  }
  std::vector<Point> front;
  for (std::size_t i : ParetoFront(xs, scores)) front.push_back(explored[i]);
  for (std::size_t k = 0; k + 1 < front.size(); ++k) {  // a staircase through the front
    svg.Line(X(front[k].x), Y(front[k].score), X(front[k + 1].x), Y(front[k].score), kGrey);
    svg.Line(X(front[k + 1].x), Y(front[k].score), X(front[k + 1].x), Y(front[k + 1].score),
             kGrey);
  }
  for (std::size_t i = 0; i < explored.size(); ++i) {
    if (!(explored[i].x > 0)) continue;
    const auto& e = r.outcome.explored[i];
    svg.Circle(X(explored[i].x), Y(explored[i].score), 3, kBlue,
               e.point.arch.name + ": " + FormatNumber("%.4g ", explored[i].x) + axis.unit + ", " +
                   FormatNumber("%.4g ", explored[i].score) + unit);
  }
  for (const auto& b : baselines) {
    if (!(b.at.x > 0)) continue;
    svg.Rect(X(b.at.x) - 5, Y(b.at.score) - 5, 10, 10, kOrange);
    MarkerLabel(svg, X(b.at.x), Y(b.at.score), W, b.name + " + Phaze DP", "#b05a00");
  }
  if (r.best_common >= 0 && explored[r.best_common].x > 0) {
    const Point& w = explored[r.best_common];
    svg.Circle(X(w.x), Y(w.score), 6, kRed);
    MarkerLabel(svg, X(w.x), Y(w.score), W,
                "winner " + r.outcome.explored[r.best_common].point.arch.name, kRed);
  }
  std::vector<std::pair<std::string, std::string>> legend = {
      {kBlue, "explored architecture"}, {kGrey, "Pareto front (explored architectures)"}};
  if (r.best_common >= 0) legend.emplace_back(kRed, "common winner");
  if (!baselines.empty()) legend.emplace_back(kOrange, "baseline preset with Phaze's DP");
  svg.Legend(W + 20, 10, legend);
  return svg.Finish();
}

}  // namespace

std::string ThroughputAreaSvg(const SearchResults& r) {
  XAxis axis;
  axis.title = "Explored architectures: throughput against area";
  axis.label = "accelerator area (mm²)";
  axis.unit = "mm²";
  axis.explored = [&](std::size_t i) { return r.outcome.explored[i].point.area_um2 * 1e-6; };
  axis.baseline = [](const std::vector<const PlanChoice*>&, double area) { return area; };
  axis.include = r.area_budget_mm2;
  return ScoreSvg(r, axis);
}

std::string ThroughputPowerSvg(const SearchResults& r) {
  XAxis axis;
  axis.title = "Explored architectures: throughput against power";
  axis.label = "average power per device (W, mean over the models' winning plans)";
  axis.unit = "W";
  axis.explored = [&](std::size_t i) { return r.outcome.explored[i].evaluation.MeanPowerW(); };
  axis.baseline = [](const std::vector<const PlanChoice*>& plans, double) {
    double sum = 0;
    for (const PlanChoice* p : plans) {
      if (!p || !p->feasible) return 0.0;
      sum += p->power_w;
    }
    return plans.empty() ? 0.0 : sum / static_cast<double>(plans.size());
  };
  axis.include = r.run.arch.power_budget_w;
  return ScoreSvg(r, axis);
}

std::string PipelineSvg(const SearchResults& r) {
  const double bars = 720, row_h = 50;
  double label_w = 0;
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    label_w = std::max(label_w, SvgCanvas::TextWidth(r.models[m].name, 11));
    if (const PlanChoice* p = ShownPlan(r, m)) {
      label_w = std::max(label_w, SvgCanvas::TextWidth(PlanLine(*p), 10));
    }
  }
  const double left = label_w + 14;
  SvgCanvas svg;
  svg.Text(0, -16, PlotTitle(r, "Pipelines"), {14, "start", "", false, true});
  for (std::size_t m = 0; m < r.models.size(); ++m) {
    const double y = row_h * static_cast<double>(m);
    svg.Text(0, y + 14, r.models[m].name);
    const PlanChoice* p = ShownPlan(r, m);
    if (p == nullptr) {
      svg.Text(left, y + 21, "no feasible plan", {11, "start", kGrey});
      continue;
    }
    svg.Text(0, y + 28, PlanLine(*p), {10, "start", kGrey});
    int total = 0;
    double slowest = 0;
    for (const auto& s : p->stages) {
      total += s.layers;
      slowest = std::max(slowest, s.load_s);
    }
    double x = left;
    for (std::size_t k = 0; k < p->stages.size(); ++k) {
      const auto& s = p->stages[k];
      const double w = bars * s.layers / std::max(1, total);
      const double share = slowest > 0 ? s.load_s / slowest : 1;
      svg.BeginGroup("stage " + std::to_string(k) + ": " + s.first_layer + " .. " + s.last_layer +
                     " (" + std::to_string(s.layers) + " layers), " + std::to_string(s.devices) +
                     " device(s), load " + FormatNumber("%.4g s", s.load_s) + " (" +
                     FormatNumber("%.0f%% of the slowest), memory ", 100 * share) +
                     FormatNumber("%.3g GiB", s.peak_memory_bytes / 1073741824.0));
      svg.Rect(x, y + 2, std::max(0.5, w), 28, Shade(share), "stroke=\"white\"");
      const std::string label = std::to_string(s.layers) + "×" + std::to_string(s.devices);
      if (SvgCanvas::TextWidth(label, 11) + 6 < w) {
        svg.Text(x + 3, y + 20, label, {11, "start", share > 0.45 ? "white" : "black"});
      }
      svg.EndGroup();
      x += w;
    }
  }
  const double bottom = row_h * static_cast<double>(std::max<std::size_t>(1, r.models.size()));
  svg.Text(left, bottom + 4,
           "stages from first (embedding) to last (head), widths ∝ layers; "
           "label: layers × devices per stage",
           {10, "start", kGrey});
  svg.Legend(left, bottom + 26,
             {{Shade(0.25), "stage load 25% of the slowest stage's"},
              {Shade(0.5), "50%"},
              {Shade(0.75), "75%"},
              {Shade(1.0), "100%: the bottleneck stage"}},
             10);
  return svg.Finish();
}

std::string MemorySvg(const SearchResults& r) {
  struct Part {
    const char* colour;
    const char* label;
    double StageMemory::*bytes;
  };
  const Part parts[] = {{kBlue, "weights", &StageMemory::weight_bytes},
                        {"#59a14f", "gradients", &StageMemory::gradient_bytes},
                        {kOrange, "optimizer state", &StageMemory::optimizer_state_bytes},
                        {kRed, "activations kept", &StageMemory::activation_bytes},
                        {"#b07aa1", "working set", &StageMemory::working_bytes}};
  constexpr double kGiB = 1073741824.0;
  const double panel_h = 150, gap = 70;
  SvgCanvas svg;
  double y0 = 0;
  for (std::size_t m = 0; m < r.models.size(); ++m, y0 += panel_h + gap) {
    const PlanChoice* p = ShownPlan(r, m);
    svg.Text(0, y0 - 8, r.models[m].name + (p ? ": " + PlanLine(*p) : ": no feasible plan"),
             {11, "start", "", false, true});
    if (p == nullptr) continue;
    const auto& stages = p->plan.stages;
    const double n = static_cast<double>(std::max<std::size_t>(1, stages.size()));
    const double width = std::clamp(22 * n, 240.0, 720.0), slot = width / n;
    double peak = 0;
    for (const auto& s : stages) {
      double total = 0;
      for (const auto& part : parts) total += s.memory.*part.bytes;
      peak = std::max(peak, total);
    }
    // The scale fits the stages (MiB when they are small); the HBM line when it is on the scale.
    const double hbm = p->hbm_gib * kGiB;
    const bool mib = std::max(peak, std::min(hbm, peak * 1.5)) < kGiB;
    const double unit = mib ? 1048576.0 : kGiB;
    const std::vector<double> ticks =
        NiceTicks(0, std::max(peak, hbm <= peak * 1.5 ? hbm : 0) / unit, 4);
    const double top = ticks.back();
    auto Y = [&](double v) { return y0 + panel_h - v / top * panel_h; };
    svg.Line(0, y0 + panel_h, width, y0 + panel_h, "black");
    svg.Line(0, y0, 0, y0 + panel_h, "black");
    for (double g : ticks) {
      svg.Line(-4, Y(g), 0, Y(g), "black");
      svg.Text(-7, Y(g) + 4, TickLabel(g), {10, "end"});
    }
    svg.Text(-40, y0 + panel_h / 2, mib ? "MiB per device" : "GiB per device",
             {11, "middle", "", true});
    const std::size_t every = std::max<std::size_t>(1, stages.size() / 16);
    for (std::size_t k = 0; k < stages.size(); ++k) {
      const double x = slot * static_cast<double>(k) + slot * 0.1;
      double base = 0;
      svg.BeginGroup("stage " + std::to_string(k) +
                     FormatNumber(": %.4g GiB at peak", stages[k].peak_memory_bytes / kGiB));
      for (const auto& part : parts) {
        const double v = stages[k].memory.*part.bytes / unit;
        if (v > 0) svg.Rect(x, Y(base + v), slot * 0.8, Y(base) - Y(base + v), part.colour);
        base += v;
      }
      svg.EndGroup();
      if (k % every == 0) {
        svg.Text(x + slot * 0.4, y0 + panel_h + 13, std::to_string(k), {10, "middle"});
      }
    }
    if (hbm / unit <= top) {
      svg.Line(0, Y(hbm / unit), width, Y(hbm / unit), "black", "stroke-dasharray=\"5 3\"");
      svg.Text(width + 4, Y(hbm / unit) + 4, FormatNumber("HBM %g GiB", p->hbm_gib), {10});
    } else {
      svg.Text(width + 4, y0 + 14,
               FormatNumber("HBM %g GiB: above the scale, ", p->hbm_gib) +
                   FormatNumber("peak %.2g%% used", 100 * peak / hbm),
               {10});
    }
    svg.Text(width / 2, y0 + panel_h + 30, "pipeline stage", {11, "middle"});
  }
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& part : parts) legend.emplace_back(part.colour, part.label);
  const double x = svg.Right() + 24;  // right of every panel and its labels (not of the title)
  const double below = svg.Legend(x, 10, legend);
  svg.Line(x, below - 4, x + 11, below - 4, "black", "stroke-dasharray=\"4 2\"");
  svg.Text(x + 16.5, below, "HBM capacity", {11});
  svg.Text(0, -30, PlotTitle(r, "Memory per device of each pipeline stage"),
           {14, "start", "", false, true});
  return svg.Finish();
}

}  // namespace phaze
