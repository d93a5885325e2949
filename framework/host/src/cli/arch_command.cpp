// `phaze arch --space FILE|paper [--format table|json] [--limit N]` enumerates an architecture
// space by decreasing area (`phaze --config RUN.yaml arch`: the space that run config searches);
// `phaze arch --preset NAME|FILE` shows one architecture with its area breakdown and peak FLOP/s.
// --output FILE writes the JSON as well.
#include <fmt/printf.h>

#include <cstdio>
#include <filesystem>

#include "commands.hpp"
#include "phaze/arch/arch_space.hpp"
#include "phaze/arch/cost_model.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"
#include "phaze/core/paths.hpp"
#include "phaze/estimate/device_model.hpp"
#include "phaze/estimate/energy_model.hpp"
#include "phaze/search/run_config.hpp"

namespace po = boost::program_options;

namespace phaze::cli {

namespace {

std::string Num(double v, const char* format) {
  std::string buf = fmt::sprintf(format, v);
  return buf;
}

Json PointJson(const ArchConfig& a, const AreaBreakdown& area) {
  Json j = a.ToJson();
  j["area_mm2"] = area.TotalMm2();
  j["area_um2"] = area.TotalUm2();
  if (area.extrapolated) j["area_extrapolated"] = true;
  return j;
}

}  // namespace

void AddArchOptions(po::options_description& d) {
  d.add_options()(
      "space", po::value<std::string>(),
      "search-space file, or 'paper' for share/arch/paper-space.yaml (without it, the global "
      "--config RUN.yaml gives its arch.space)")(
      "preset", po::value<std::string>(), "one architecture: a preset name (tpuv4, …) or a file")(
      "area-model", po::value<std::string>(), "area tables (default share/area/22nm.yaml)")(
      "format", po::value<std::string>()->default_value("table"), "table | json")(
      "limit", po::value<std::int64_t>()->default_value(0),
      "print only the first N configs (0: all)");
}

int RunArch(CommandContext& ctx) {
  // The space: --space, or the one a run config's search would visit (the global --config).
  const bool config = !ctx.global.config.empty();
  const bool preset = ctx.vm.count("preset") > 0;
  if (static_cast<int>(ctx.vm.count("space") > 0) + static_cast<int>(config) +
          static_cast<int>(preset) !=
      1) {
    throw UsageError(
        "phaze arch: give exactly one of --space FILE, --preset NAME or the global --config "
        "RUN.yaml "
        "(its arch.space)");
  }
  const std::string format = ctx.vm["format"].as<std::string>();
  if (format != "table" && format != "json") {
    throw UsageError("--format: expected table or json, found '" + format + "'");
  }
  const AreaModel area = ctx.vm.count("area-model")
                             ? AreaModel::LoadFile(ctx.vm["area-model"].as<std::string>())
                             : AreaModel::Default();
  Json json = Json::MakeObject();
  std::string table;
  bool empty_space = false;  // a space with no config in its area window
  if (preset) {
    if (!ctx.vm["limit"].defaulted()) {
      throw UsageError("--limit applies to --space (how many of its configs to list)");
    }
    const ArchConfig a = LoadArchConfig(ctx.vm["preset"].as<std::string>());
    const AreaBreakdown b = area.Area(a);
    json = PointJson(a, b);
    json["area_tensor_cores_um2"] = b.tensor_cores_um2;
    json["area_vector_cores_um2"] = b.vector_cores_um2;
    json["area_glb_um2"] = b.glb_um2;
    table = "architecture     " + a.name + "\n" + "tensor cores     " + std::to_string(a.num_tc) +
            " x " + std::to_string(a.pe_x) + "x" + std::to_string(a.pe_y) + " PEs, L2 " +
            std::to_string(a.l2_tc_bytes) + " bytes each\n" + "vector cores     " +
            std::to_string(a.num_vc) + " x " + std::to_string(a.pe_vc) + " lanes, L2 " +
            std::to_string(a.l2_vc_bytes) + " bytes each\n" + "global buffer    " +
            std::to_string(a.glb_bytes) + " bytes, " + Num(a.glb_bandwidth_words_per_cycle, "%g") +
            " words/cycle\n" + "HBM              " + std::to_string(a.hbm_bytes) + " bytes at " +
            Num(a.hbm_bandwidth_bytes_per_s, "%g") + " bytes/s\n" + "frequency        " +
            Num(a.frequency_hz, "%g") + " Hz\n" + "peak tensor      " +
            Num(a.PeakTensorFlopsPerS() / 1e12, "%.2f") + " TFLOP/s\n" + "area (" +
            area.Technology() + ")     " + Num(b.TotalMm2(), "%.6f") +
            " mm2 = " + Num(b.TotalUm2(), "%.0f") + " um2 (tensor cores " +
            Num(b.tensor_cores_um2 * 1e-6, "%.3f") + ", vector cores " +
            Num(b.vector_cores_um2 * 1e-6, "%.3f") + ", GLB " + Num(b.glb_um2 * 1e-6, "%.3f") +
            " mm2)" + (b.extrapolated ? " [extrapolated beyond the area tables]" : "") + "\n";
    // Power and cost (DESIGN §11): the die they scale with, static and peak power, the device's
    // cost at its own HBM size and the price of an hour of it at peak power.
    const CostModel cost = CostModel::Default();
    const DeviceCost c = cost.Device(a);
    const double static_w = EnergyModel::StaticPowerW(a), peak_w = EnergyModel::PeakPowerW(a);
    json["die_area_mm2"] = c.die_area_mm2;
    json["static_power_w"] = static_w;
    json["peak_power_w"] = peak_w;
    json["device_cost_usd"] = c.TotalUsd();
    json["die_yield"] = c.yield;
    json["hourly_usd_at_peak_power"] = cost.HourlyUsd(a, peak_w);
    double listed_nm = a.node_nm;  // the cost tables' node it is priced at (the nearest)
    cost.NodeFor(a.node_nm, &listed_nm);
    json["cost_node_nm"] = listed_nm;
    table += "die              " + Num(c.die_area_mm2, "%.1f") + " mm2 at " + Num(a.node_nm, "%g") +
             " nm" + (a.die_area_mm2 > 0 ? " (published)" : " (area model)") +
             (listed_nm != a.node_nm ? "; priced at " + Num(listed_nm, "%g") +
                                           " nm, the nearest node of the cost tables"
                                     : std::string()) +
             "\npower            static " + Num(static_w, "%.1f") + " W, peak " +
             Num(peak_w, "%.1f") + " W (every MAC, lane, buffer and HBM byte busy)" +
             (a.tdp_w > 0 ? "; TDP " + Num(a.tdp_w, "%g") + " W" : std::string()) +
             (a.power_limit_w > 0 && a.power_limit_w < a.tdp_w
                  ? ", run at " + Num(a.power_limit_w, "%g") + " W: tensor clock × " +
                        Num(DeviceModel::PowerLimitClockScale(a), "%.3f")
                  : std::string()) +
             "\n" + "cost             $" + Num(c.TotalUsd(), "%.0f") + " per device (die $" +
             Num(c.die_usd, "%.0f") + " at yield " + Num(c.yield, "%.3f") + ", HBM $" +
             Num(c.hbm_usd, "%.0f") + ", packaging and test $" + Num(c.packaging_usd, "%.0f") +
             "); $" + Num(cost.HourlyUsd(a, peak_w), "%.4g") + " per hour" +
             (a.hourly_usd > 0 ? " (rental)" : " (owned, at peak power)") + "\n";
  } else {
    ArchSpace s;
    if (config) {
      const RunConfig run = RunConfig::ParseFile(ctx.global.config, false);
      s = LoadNamed(run.arch.space_node,
                    [&] { return ArchSpace::LoadFile(run.SpaceFile(), area); });
    } else {
      std::string file = ctx.vm["space"].as<std::string>();
      if (file == "paper") file = (ShareDirectory() / "arch" / "paper-space.yaml").string();
      s = ArchSpace::LoadFile(file, area);
    }
    const auto points = s.Enumerate(area);
    std::int64_t limit = ctx.vm["limit"].as<std::int64_t>();
    if (limit < 0) throw UsageError("--limit: expected 0 (all) or a positive integer, found " +
                                    std::to_string(limit));
    if (limit <= 0 || limit > static_cast<std::int64_t>(points.size())) limit = points.size();
    json["space"] = s.name;
    json["candidates"] = s.CandidateCount();
    json["feasible"] = static_cast<std::int64_t>(points.size());
    empty_space = points.empty();
    json["area_budget_mm2"] = s.area_budget_um2 * 1e-6;
    Json configs = Json::MakeArray();
    table = "space " + s.name + ": " + std::to_string(points.size()) + " feasible of " +
            std::to_string(s.CandidateCount()) + " candidates; area budget " +
            Num(s.area_budget_um2 * 1e-6, "%.6f") + " mm2 (" + s.area_budget_source + ")\n" +
            "    rank  num_tc  num_vc  pe_x  pe_y  pe_vc  glb_MiB  glb_bw  area_mm2\n";
    for (std::int64_t i = 0; i < limit; ++i) {
      const auto& p = points[i];
      configs.Push(PointJson(p.arch, area.Area(p.arch)));
      if (format == "table") {
        std::string line = fmt::sprintf("%8lld %7lld %7lld %5lld %5lld %6lld %8lld %7g %9.6f\n",
                      static_cast<long long>(i + 1), static_cast<long long>(p.arch.num_tc),
                      static_cast<long long>(p.arch.num_vc), static_cast<long long>(p.arch.pe_x),
                      static_cast<long long>(p.arch.pe_y), static_cast<long long>(p.arch.pe_vc),
                      static_cast<long long>(p.arch.glb_bytes >> 20),
                      p.arch.glb_bandwidth_words_per_cycle, p.area_um2 * 1e-6);
        table += line;
      }
    }
    json["configs"] = configs;
  }
  if (!ctx.global.output.empty()) WriteTextFileAtomic(ctx.global.output, json.Dump(1) + "\n");
  ctx.out << (format == "json" ? json.Dump(1) + "\n" : table);
  // A space with no config in its area window is valid input with nothing in it (a search of
  // it is refused): exit 1, said.
  if (empty_space) {
    ctx.err << "no config of the space lies in its area window (between its min_area_fraction "
               "and its area budget)\n";
    return static_cast<int>(ExitCode::kNoFeasibleResult);
  }
  return 0;
}

}  // namespace phaze::cli
