// `phaze estimate --arch PRESET|FILE [--estimator NAME | --config RUN.yaml] --gemm B,M,N,K
//  | --op FUNCTION,ELEMENTS[,ROW] | --collective KIND,BYTES,GROUP | --ops-file CSV`: per-op latency
// on one core and on all cores (seconds and cycles), or a collective's time; --output writes JSON.
// The ops file has one op per line: `gemm,B,M,N,K`, `batched_gemm,B,M,N,K`, `fp8_gemm,B,M,N,K`
// (operands already FP8), `fp8_gemm_backward,B,M,N,K` (the same in the backward pass: exact
// accumulation, DeviceTechnology::fp8_exact_accumulation),
// `vector,FUNCTION,ELEMENTS[,ROW[,READ_BYTES,WRITE_BYTES]]` (default traffic: the elements read and
// written once) or `collective,KIND,BYTES,GROUP` ('#' comments).
#include <fmt/printf.h>

#include <cstdio>
#include <sstream>

#include "commands.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"
#include "phaze/core/limits.hpp"
#include "phaze/core/text_format.hpp"
#include "phaze/estimate/estimator.hpp"
#include "phaze/search/run_config.hpp"

namespace po = boost::program_options;

namespace phaze::cli {

namespace {

// The cells of a comma-separated request, each without the blanks around it (a CSV written
// with spaces after its commas, or with CRLF line ends).
std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> cells = SplitCommas(text);
  for (std::string& cell : cells) {
    const std::size_t first = cell.find_first_not_of(" \t\r");
    cell = first == std::string::npos
               ? std::string()
               : cell.substr(first, cell.find_last_not_of(" \t\r") - first + 1);
  }
  return cells;
}

// An integer in [1, hi] (hi: phaze's limit for the quantity, phaze/core/limits.hpp).
std::int64_t PositiveInt(const std::string& text, const std::string& where, std::int64_t hi) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size() && v >= 1 && v <= hi) return v;
  } catch (const std::exception&) {
  }
  throw UsageError(where + ": expected an integer in [1, " + std::to_string(hi) + "], found '" +
                   text + "' (phaze's limit: see share/config/README.md, Limits)");
}

struct Request {
  std::string text;  // as given
  std::optional<OpWork> op;
  std::optional<CollectiveKind> collective;
  std::int64_t bytes = 0, group = 0;
  Pass pass = Pass::kForward;  // the pass the op is estimated in
};

// A vector op's line: its elements, row length and, optionally, its own traffic.
constexpr const char* kVectorForm = "vector,FUNCTION,ELEMENTS[,ROW[,READ_BYTES,WRITE_BYTES]]";

Request ParseRequest(const std::vector<std::string>& cells, const std::string& where,
                     std::int64_t word_bytes) {
  Request r;
  const std::string kind = cells.empty() ? "" : cells[0];
  auto need = [&](size_t lo, size_t hi, const char* form) {
    if (cells.size() < lo || cells.size() > hi) throw UsageError(where + ": expected " + form);
  };
  if (kind == "gemm" || kind == "batched_gemm" || kind == "fp8_gemm" ||
      kind == "fp8_gemm_backward") {
    need(5, 5, (kind + ",B,M,N,K").c_str());
    // Each dimension within the largest a model can make (the vocabulary), and 2·B·M·N·K FLOPs
    // within what one workload may count.
    GemmShape s{PositiveInt(cells[1], where, limits::kVocab), PositiveInt(cells[2], where, limits::kVocab),
                PositiveInt(cells[3], where, limits::kVocab), PositiveInt(cells[4], where, limits::kVocab)};
    if (2.0L * s.batch * s.m * s.n * s.k > static_cast<long double>(limits::kCount)) {
      throw UsageError(where + ": a GEMM of more than 2^62 FLOPs (phaze's limit: see "
                       "share/config/README.md, Limits)");
    }
    r.op = OpWork::Gemm(s, word_bytes, kind != "batched_gemm");
    // An FP8 GEMM whose operands are FP8 already (no cast kernel): its weight is the FP8 copy.
    r.op->fp8 = kind == "fp8_gemm" || kind == "fp8_gemm_backward";
    if (kind == "fp8_gemm_backward") r.pass = Pass::kBackward;
  } else if (kind == "vector") {
    need(3, 6, kVectorForm);
    if (cells.size() == 5) {
      throw UsageError(where + ": expected " + kVectorForm + " (both byte counts, or neither)");
    }
    const std::int64_t elements = PositiveInt(cells[2], where, limits::kMemoryBytes);
    const std::int64_t row =
        cells.size() >= 4 ? PositiveInt(cells[3], where, limits::kMemoryBytes) : 1;
    if (row > elements) {
      throw UsageError(where + ": a row of " + std::to_string(row) + " is longer than the " +
                       std::to_string(elements) + " elements (" + kVectorForm + ")");
    }
    r.op = OpWork::Vector(cells[1], elements, word_bytes, row);
    if (cells.size() == 6) {  // the kernel's own traffic (default: its elements read and written)
      r.op->bytes_read = PositiveInt(cells[4], where, limits::kMemoryBytes);
      r.op->bytes_written = PositiveInt(cells[5], where, limits::kMemoryBytes);
    }
  } else if (kind == "collective") {
    need(4, 4, "collective,KIND,BYTES,GROUP");
    r.collective = ParseCollectiveKind(cells[1]);
    if (!r.collective) {
      throw UsageError(where + ": unknown collective '" + cells[1] +
                       "'; expected all_reduce, all_gather, reduce_scatter or all_to_all");
    }
    r.bytes = PositiveInt(cells[2], where, limits::kMemoryBytes);
    r.group = PositiveInt(cells[3], where, limits::kAccelerators);
  } else {
    throw UsageError(where + ": unknown op kind '" + kind +
                     "'; expected gemm, batched_gemm, fp8_gemm, fp8_gemm_backward, vector or "
                     "collective");
  }
  return r;
}

}  // namespace

void AddEstimateOptions(po::options_description& d) {
  d.add_options()("arch", po::value<std::string>(),
                  "architecture: preset name (tpuv4, …) or YAML file")(
      "estimator", po::value<std::string>(),
      "estimator name (default: the run config's, or device)")(
      "gemm", po::value<std::vector<std::string>>()->composing(),
      "B,M,N,K: out[B][M][N] = A[B][M][K]·W[K][N] (repeatable)")(
      "op", po::value<std::vector<std::string>>()->composing(),
      "FUNCTION,ELEMENTS[,ROW[,READ_BYTES,WRITE_BYTES]]: a vector op (gelu, softmax, …; "
      "repeatable)")("fp8-gemm", po::value<std::vector<std::string>>()->composing(),
                     "B,M,N,K: a GEMM on FP8 operands (repeatable)")(
      "collective", po::value<std::vector<std::string>>()->composing(),
      "KIND,BYTES,GROUP: all_reduce, all_gather, reduce_scatter, all_to_all (repeatable)")(
      "ops-file", po::value<std::string>(),
      "CSV of ops, one per line: gemm,B,M,N,K | batched_gemm,B,M,N,K | fp8_gemm,B,M,N,K | "
      "fp8_gemm_backward,B,M,N,K (exact accumulation) | "
      "vector,FUNCTION,ELEMENTS[,ROW[,READ_BYTES,WRITE_BYTES]] | collective,KIND,BYTES,GROUP "
      "('#' starts a comment line)")(
      "link-bandwidth", po::value<double>(),
      "a flat network of this many bytes/s per device for collectives (default: the run "
      "config's network, or 4 GiB/s)")("link-latency", po::value<double>(),
                                       "seconds per ring step of that flat network (default 0)");
}

int RunEstimate(CommandContext& ctx) {
  if (!ctx.vm.count("arch")) throw UsageError("phaze estimate: --arch PRESET|FILE is required");
  std::vector<std::pair<std::string, std::vector<std::string>>> requests;  // where, cells
  for (const auto& [flag, kind] : {std::pair<std::string, std::string>{"gemm", "gemm"},
                                   {"fp8-gemm", "fp8_gemm"},
                                   {"op", "vector"},
                                   {"collective", "collective"}}) {
    if (!ctx.vm.count(flag)) continue;
    for (const auto& value : ctx.vm[flag].as<std::vector<std::string>>()) {
      std::vector<std::string> cells = Split(value);
      cells.insert(cells.begin(), kind);
      requests.emplace_back("--" + flag, cells);
    }
  }
  if (ctx.vm.count("ops-file")) {
    const std::string file = ctx.vm["ops-file"].as<std::string>();
    std::istringstream in(ReadInputFile(file));
    std::string line;
    const std::size_t before = requests.size();
    for (int n = 1; std::getline(in, line); ++n) {
      const std::size_t first = line.find_first_not_of(" \t\r");
      if (first == std::string::npos || line[first] == '#') continue;
      requests.emplace_back(file + ":" + std::to_string(n), Split(line));
    }
    if (requests.size() == before) {
      throw UsageError("--ops-file " + file + ": no op in it (every line is blank or a # comment)");
    }
  }
  if (requests.empty()) {
    throw UsageError("phaze estimate: give --gemm, --op, --collective or --ops-file");
  }

  RunConfig run = ctx.global.config.empty() ? RunConfig::Defaults()
                                            : RunConfig::ParseFile(ctx.global.config, false);
  ComponentChoice choice = run.estimator;
  if (ctx.vm.count("estimator"))
    choice = {RegisteredName(ctx.registry, ComponentKind::kEstimator, "--estimator",
                             ctx.vm["estimator"].as<std::string>()),
              std::nullopt, std::nullopt};
  run.estimator = choice;
  run.CheckComponents(ctx.registry, false, true, false);
  const auto estimator = ctx.registry.CreateEstimator(choice.name, choice.Params());
  const ArchConfig arch = LoadArchConfig(ctx.vm["arch"].as<std::string>());
  // Collectives are the network model's (a group of consecutive ranks, as tensor parallelism).
  Network network = run.cluster.network;
  if (ctx.vm.count("link-bandwidth") || ctx.vm.count("link-latency")) {
    network = Network::Flat(
        ctx.vm.count("link-bandwidth") ? ctx.vm["link-bandwidth"].as<double>() : 4294967296.0,
        ctx.vm.count("link-latency") ? ctx.vm["link-latency"].as<double>() : 0.0);
    if (!network.Validate().empty()) {
      throw UsageError("--link-bandwidth must be > 0 and --link-latency ≥ 0");
    }
  }

  // Printed once every request is estimated: a bad line later in an ops file leaves no table
  // half printed above its error.
  Json results = Json::MakeArray();
  std::ostringstream table;
  table << "estimator " << choice.name << " on " << arch.name << " (" << arch.frequency_hz
        << " Hz)\n";
  for (const auto& [where, cells] : requests) {
    const Request r = ParseRequest(cells, where, arch.word_bytes);
    Json j = Json::MakeObject();
    std::string label;
    for (const auto& c : cells) label += (label.empty() ? "" : ",") + c;
    j["request"] = label;
    std::string line;
    if (r.collective) {
      const double s = network.CollectiveS(*r.collective, static_cast<double>(r.bytes),
                                           CommGroup{r.group, 1});
      j["time_s"] = s;
      line = fmt::sprintf("%-36s %.6g s\n", label.c_str(), s);
    } else {
      const OpEstimate e = estimator->Estimate(*r.op, arch, r.pass);
      j["signature"] = r.op->Signature();
      j["core"] = ToString(r.op->Core());
      j["single_core_s"] = e.single_core_s;
      j["all_cores_s"] = e.all_cores_s;
      j["single_core_cycles"] = e.single_core_s * arch.frequency_hz;
      j["all_cores_cycles"] = e.all_cores_s * arch.frequency_hz;
      if (r.op->gemm) {
        j["all_cores_utilisation"] =
            static_cast<double>(r.op->gemm->Flops()) / (e.all_cores_s * arch.PeakTensorFlopsPerS());
      }
      line = fmt::sprintf(
                    "%-36s single core %.6g s (%.0f cycles)  all cores %.6g s (%.0f cycles)\n",
                    label.c_str(), e.single_core_s, e.single_core_s * arch.frequency_hz,
                    e.all_cores_s, e.all_cores_s * arch.frequency_hz);
    }
    table << line;
    results.Push(j);
  }
  ctx.out << table.str();
  if (!ctx.global.output.empty()) {
    Json doc = Json::MakeObject();
    doc["estimator"] = choice.name;
    doc["arch"] = arch.ToJson();
    doc["network"] = network.ToJson();  // what the collectives were timed on
    doc["results"] = results;
    WriteTextFileAtomic(ctx.global.output, doc.Dump(1) + "\n");
  }
  return 0;
}

}  // namespace phaze::cli
