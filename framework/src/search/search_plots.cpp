#include "phaze/search/search_plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

std::string ThroughputAreaSvg(const SearchResults& r) {
  const double W = 640, H = 380;  // the plot area; (0, 0) is its top left corner
  struct Point {
    double area, score;
  };
  std::vector<Point> explored;
  for (const auto& e : r.outcome.explored) {
    explored.push_back({e.point.area_um2 * 1e-6, e.evaluation.score});
  }
  // Every global preset with our DP, scored like a config.
  struct Baseline {
    std::string name;
    Point at;
  };
  std::vector<Baseline> baselines;
  for (const auto& preset : r.run.arch.presets) {
    std::vector<double> thr, weights;
    double area = 0;
    for (const auto& m : r.models) {
      weights.push_back(m.weight);
      double v = 0;
      for (const auto& b : r.baselines) {
        if (b.arch == preset && b.model == m.name && b.kind == "phaze-dp") {
          v = b.plan.Throughput();
          area = b.area_mm2;
        }
      }
      thr.push_back(v);
    }
    if (area > 0)
      baselines.push_back({preset, {area, CommonScore(thr, weights, r.run.search.mean)}});
  }
  double min_area = r.area_budget_mm2, max_area = r.area_budget_mm2, max_score = 0;
  for (const auto& p : explored) {
    min_area = std::min(min_area, p.area);
    max_area = std::max(max_area, p.area);
    max_score = std::max(max_score, p.score);
  }
  for (const auto& b : baselines) {
    min_area = std::min(min_area, b.at.area);
    max_area = std::max(max_area, b.at.area);
    max_score = std::max(max_score, b.at.score);
  }
  if (max_score <= 0) max_score = 1;
  if (max_area - min_area < 1e-9) min_area = max_area * 0.9;
  const std::vector<double> x_ticks = NiceTicks(min_area, max_area, 5);
  const std::vector<double> y_ticks = NiceTicks(0, max_score * 1.05, 5);
  const double x_lo = x_ticks.front(), x_hi = x_ticks.back(), y_hi = y_ticks.back();
  auto X = [&](double a) { return (a - x_lo) / (x_hi - x_lo) * W; };
  auto Y = [&](double s) { return H - s / y_hi * H; };

  SvgCanvas svg;
  svg.Text(0, -24, "Explored architectures: throughput against area",
           {14, "start", "", false, true});
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
  svg.Text(W / 2, H + 38, "accelerator area (mm²)", {12, "middle"});
  const std::string score = r.models.size() > 1
                                ? "throughput (samples/s, " + std::string(ToString(r.run.search.mean)) + " mean of " +
                                      std::to_string(r.models.size()) + " models)"
                                : "throughput (samples/s)";
  svg.Text(-48, H / 2, score, {12, "middle", "", true});

  // Pareto front: configs no other explored config beats with less (or equal) area.
  std::vector<double> areas, scores;
  for (const auto& p : explored) {
    areas.push_back(p.area);
    scores.push_back(p.score);
  }
  std::vector<Point> front;
  for (std::size_t i : ParetoFront(areas, scores)) front.push_back(explored[i]);
  for (std::size_t k = 0; k + 1 < front.size(); ++k) {  // a staircase through the front
    svg.Line(X(front[k].area), Y(front[k].score), X(front[k + 1].area), Y(front[k].score), kGrey);
    svg.Line(X(front[k + 1].area), Y(front[k].score), X(front[k + 1].area), Y(front[k + 1].score),
             kGrey);
  }
  for (std::size_t i = 0; i < explored.size(); ++i) {
    const auto& e = r.outcome.explored[i];
    svg.Circle(X(explored[i].area), Y(explored[i].score), 3, kBlue,
               e.point.arch.name + ": " + FormatNumber("%.2f mm², ", explored[i].area) +
                   FormatNumber("%.4g samples/s", explored[i].score));
  }
  for (const auto& b : baselines) {
    svg.Rect(X(b.at.area) - 5, Y(b.at.score) - 5, 10, 10, kOrange);
    MarkerLabel(svg, X(b.at.area), Y(b.at.score), W, b.name + " + Phaze DP", "#b05a00");
  }
  if (r.best_common >= 0) {
    const Point& w = explored[r.best_common];
    svg.Circle(X(w.area), Y(w.score), 6, kRed);
    MarkerLabel(svg, X(w.area), Y(w.score), W,
                "winner " + r.outcome.explored[r.best_common].point.arch.name, kRed);
  }
  std::vector<std::pair<std::string, std::string>> legend = {
      {kBlue, "explored architecture"}, {kGrey, "Pareto front (explored architectures)"}};
  if (r.best_common >= 0) legend.emplace_back(kRed, "common winner");
  if (!baselines.empty()) legend.emplace_back(kOrange, "baseline preset with Phaze's DP");
  svg.Legend(W + 20, 10, legend);
  return svg.Finish();
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
