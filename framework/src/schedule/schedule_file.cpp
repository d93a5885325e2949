#include "phaze/schedule/schedule_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "phaze/core/limits.hpp"
#include "phaze/core/svg.hpp"
#include "phaze/core/text_format.hpp"

namespace phaze {

ScheduleProblem ParseScheduleProblem(const ConfigNode& root) {
  root.ExpectKeys({"name", "num_tc", "num_vc", "ops", "edges"});
  ScheduleProblem p;
  p.name = root.Has("name") ? root.Child("name").AsString() : "graph";
  p.num_tc = static_cast<int>(root.Child("num_tc").AsPositiveInt());
  p.num_vc = static_cast<int>(root.Child("num_vc").AsPositiveInt());
  std::map<std::string, int> index;
  for (const auto& node : root.Child("ops").Elements()) {
    node.ExpectKeys({"name", "class", "single_core_s", "all_cores_s"});
    ScheduleOp op;
    op.name = node.Child("name").AsString();
    const ConfigNode cls = node.Child("class");
    const auto parsed = ParseScheduleClass(cls.AsString());
    if (!parsed) cls.Fail("expected tensor, vector, fused or link, found '" + cls.AsString() + "'");
    op.cls = *parsed;
    auto seconds = [&](const char* key) { return node.Child(key).AsDuration(); };
    op.single_core_s = seconds("single_core_s");
    op.all_cores_s = node.Has("all_cores_s") ? seconds("all_cores_s") : op.single_core_s;
    if (!node.Has("all_cores_s") && op.UsesCores()) {
      node.Fail("all_cores_s is required for a " + cls.AsString() + " op");
    }
    if (!index.emplace(op.name, static_cast<int>(p.ops.size())).second) {
      node.Child("name").Fail("duplicate op name '" + op.name + "'");
    }
    p.ops.push_back(std::move(op));
  }
  if (root.Has("edges")) {
    for (const auto& node : root.Child("edges").Elements()) {
      node.ExpectKeys({"from", "to"});
      int ends[2];
      for (int k = 0; k < 2; ++k) {
        const ConfigNode end = node.Child(k == 0 ? "from" : "to");
        const auto it = index.find(end.AsString());
        if (it == index.end()) end.Fail("no op named '" + end.AsString() + "'");
        ends[k] = it->second;
      }
      if (ends[0] == ends[1]) node.Fail("an edge from an op to itself");
      p.edges.emplace_back(ends[0], ends[1]);
    }
    // A cycle is bad input, not a scheduler bug: located at the edges, naming an op on it.
    if (const auto at = p.OpOnCycle()) {
      root.Child("edges").Fail("the edges form a cycle through op '" +
                               p.ops[static_cast<std::size_t>(*at)].name + "'");
    }
  }
  if (std::string e = p.Validate(); !e.empty()) root.Fail(e);
  return p;
}

Json ScheduleProblemToJson(const ScheduleProblem& p) {
  Json doc = Json::MakeObject();
  doc["name"] = p.name;
  doc["num_tc"] = p.num_tc;
  doc["num_vc"] = p.num_vc;
  Json ops = Json::MakeArray();
  for (const auto& op : p.ops) {
    Json o = Json::MakeObject();
    o["name"] = op.name;
    o["class"] = ToString(op.cls);
    o["single_core_s"] = op.single_core_s;
    o["all_cores_s"] = op.UsesCores() ? op.all_cores_s : op.single_core_s;
    ops.Push(std::move(o));
  }
  doc["ops"] = std::move(ops);
  Json edges = Json::MakeArray();
  for (const auto& [from, to] : p.edges) {
    Json e = Json::MakeObject();
    e["from"] = p.ops[from].name;
    e["to"] = p.ops[to].name;
    edges.Push(std::move(e));
  }
  doc["edges"] = std::move(edges);
  return doc;
}

namespace {

Json Cores(const std::vector<int>& cores, bool intra_op) {
  Json list = Json::MakeArray();
  if (intra_op && cores.size() > 2) {  // all of them: a [first, last] range
    list.Push(cores.front());
    list.Push(cores.back());
    return list;
  }
  for (int c : cores) list.Push(c);
  return list;
}

}  // namespace

Json ScheduleToJson(const ScheduleProblem& p, const ScheduleResult& r) {
  Json doc = Json::MakeObject();
  doc["name"] = p.name;
  doc["makespan_s"] = r.makespan_s;
  doc["sequential_s"] = p.SequentialMakespan();
  doc["num_tc"] = p.num_tc;
  doc["num_vc"] = p.num_vc;
  Json stats = Json::MakeObject();
  stats["path"] = ToString(r.stats.path);
  stats["status"] = SolveStatusName(r.stats.status);
  stats["gap"] = r.stats.gap;
  stats["lower_bound_s"] = r.stats.lower_bound_s;
  stats["solve_time_s"] = r.stats.solve_time_s;
  stats["segments"] = r.stats.segments;
  stats["fast_path_segments"] = r.stats.fast_path_segments;
  stats["solves"] = r.stats.solves;
  stats["resolves"] = r.stats.resolves;
  stats["variables"] = r.stats.variables;
  stats["rows"] = r.stats.rows;
  if (!r.stats.detail.empty()) stats["detail"] = r.stats.detail;
  doc["stats"] = std::move(stats);
  Json ops = Json::MakeArray();
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const ScheduledOp& s = r.ops[i];
    Json o = Json::MakeObject();
    o["name"] = p.ops[i].name;
    o["class"] = ToString(p.ops[i].cls);
    o["start_s"] = s.start_s;
    o["duration_s"] = s.duration_s;
    o["intra_op"] = s.intra_op;
    o["tensor_cores"] = Cores(s.tensor_cores, s.intra_op);
    o["vector_cores"] = Cores(s.vector_cores, s.intra_op);
    ops.Push(std::move(o));
  }
  doc["ops"] = std::move(ops);
  return doc;
}

namespace {

std::string Fixed2(double v) { return FormatNumber("%.2f", v); }
std::string Fixed3(double v) { return FormatNumber("%.3f", v); }

const char* Colour(ScheduleClass cls) {
  switch (cls) {
    case ScheduleClass::kTensor:
      return "#4e79a7";
    case ScheduleClass::kVector:
      return "#59a14f";
    case ScheduleClass::kFused:
      return "#b07aa1";
    case ScheduleClass::kLink:
      return "#f28e2b";
  }
  return "#999999";
}

}  // namespace

std::string ScheduleToSvg(const ScheduleProblem& p, const ScheduleResult& r,
                          const std::string& title) {
  // Rows: the tensor and vector cores some single-core op used (at least core 0 of a class an
  // intra-op op used), then the links.
  std::vector<char> tc_used(p.num_tc, 0), vc_used(p.num_vc, 0);
  bool links = false;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const auto& s = r.ops[i];
    links |= !p.ops[i].UsesCores();
    if (s.intra_op) {
      if (!s.tensor_cores.empty()) tc_used[0] = 1;
      if (!s.vector_cores.empty()) vc_used[0] = 1;
      continue;
    }
    for (int c : s.tensor_cores) tc_used[c] = 1;
    for (int c : s.vector_cores) vc_used[c] = 1;
  }
  std::vector<std::string> labels;
  std::map<int, int> tc_row, vc_row;
  for (int c = 0; c < p.num_tc; ++c) {
    if (tc_used[c]) {
      tc_row[c] = static_cast<int>(labels.size());
      labels.push_back("TC" + std::to_string(c));
    }
  }
  for (int c = 0; c < p.num_vc; ++c) {
    if (vc_used[c]) {
      vc_row[c] = static_cast<int>(labels.size());
      labels.push_back("VC" + std::to_string(c));
    }
  }
  const int link_row = static_cast<int>(labels.size());
  if (links) labels.push_back("links");
  const double top = 0, row_h = 24, width = 960;
  double left = 0;
  for (const auto& l : labels) left = std::max(left, SvgCanvas::TextWidth(l, 11));
  left += 12;
  // The time axis in µs (ms for long passes), at whole 1-2-5 steps covering the makespan.
  const bool ms = r.makespan_s >= 0.01;
  const double unit = ms ? 1e-3 : 1e-6;
  const std::vector<double> ticks = NiceTicks(0, std::max(r.makespan_s, 1e-12) / unit, 5);
  const double scale = width / (ticks.back() * unit);
  SvgCanvas svg;
  // The title wraps at the chart's width: a layer's full name can be long.
  const auto title_lines =
      WrapText(title + " — makespan " + Fixed2(r.makespan_s * 1e6) + " µs (sequential " +
                   Fixed2(p.SequentialMakespan() * 1e6) + " µs), " + std::string(ToString(r.stats.path)) + ", " +
                   std::string(SolveStatusName(r.stats.status)),
               left + width, 14);
  for (std::size_t k = 0; k < title_lines.size(); ++k) {
    svg.Text(0, top - 12 - 18.0 * static_cast<double>(title_lines.size() - 1 - k), title_lines[k],
             {14, "start", "", false, true});
  }
  for (std::size_t k = 0; k < labels.size(); ++k) {
    svg.Text(0, top + row_h * k + row_h * 0.65, labels[k]);
  }
  auto bar = [&](int row, double start, double duration, const std::string& name,
                 const char* colour, const std::string& tip) {
    const double x = left + start * scale, w = std::max(0.5, duration * scale);
    const double y = top + row_h * row + 2;
    svg.BeginGroup(tip);
    svg.Rect(x, y, w, row_h - 4, colour, "stroke=\"white\" stroke-width=\"0.5\"");
    if (SvgCanvas::TextWidth(name, 11) + 6 < w) {
      svg.Text(x + 3, y + row_h * 0.6, name, {11, "start", "white"});
    }
    svg.EndGroup();
  };
  std::vector<bool> class_used(4, false);
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const auto& op = p.ops[i];
    const auto& s = r.ops[i];
    class_used[static_cast<int>(op.cls)] = true;
    const std::string tip = op.name + " (" + std::string(ToString(op.cls)) +
                            (s.intra_op ? ", intra-op on all cores" : "") + "): start " +
                            Fixed3(s.start_s * 1e6) + " µs, " + Fixed3(s.duration_s * 1e6) + " µs";
    if (!op.UsesCores()) {
      bar(link_row, s.start_s, s.duration_s, op.name, Colour(op.cls), tip);
      continue;
    }
    std::vector<int> rows;
    if (s.intra_op) {
      if (op.UsesTensorCore())
        for (auto [c, row] : tc_row) rows.push_back(row);
      if (op.UsesVectorCore())
        for (auto [c, row] : vc_row) rows.push_back(row);
    } else {
      for (int c : s.tensor_cores) rows.push_back(tc_row.at(c));
      for (int c : s.vector_cores) rows.push_back(vc_row.at(c));
    }
    for (int row : rows) bar(row, s.start_s, s.duration_s, op.name, Colour(op.cls), tip);
  }
  const double axis_y = top + row_h * labels.size() + 4;
  for (double t : ticks) {
    const double x = left + t * unit * scale;
    svg.Line(x, top - 2, x, axis_y, "#888");
    svg.Text(x, axis_y + 14, TickLabel(t), {11, "middle"});
  }
  svg.Text(left + width / 2, axis_y + 32,
           std::string("time from the layer pass's start (") + (ms ? "ms" : "µs") + ")",
           {12, "middle"});
  const char* meaning[] = {"tensor-core op (GEMM)", "vector-core op", "fused GEMM + epilogue",
                           "collective on the links"};
  std::vector<std::pair<std::string, std::string>> legend;
  for (int c = 0; c < 4; ++c) {
    if (class_used[c]) legend.emplace_back(Colour(static_cast<ScheduleClass>(c)), meaning[c]);
  }
  svg.Legend(left, axis_y + 54, legend);
  return svg.Finish();
}

}  // namespace phaze
