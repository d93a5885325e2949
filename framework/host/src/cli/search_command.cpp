// `phaze search --config RUN.yaml [--threads N] [--output-dir DIR] [--max-configs N]`: the whole
// Phaze run (framework/search). Prints a summary table; writes results.json, report.md and the
// SVG plots into the output directory (run config `output.directory`, relative to the working
// directory); -o FILE also writes results.json there. The search keeps a checkpoint journal
// there (search.checkpoint, search_checkpoint.hpp); `phaze search --resume DIR` continues a run
// that was killed or stopped, with the run config it was started with (or --config's). Ctrl-C stops after the configs being
// evaluated, writing the partial results (marked "complete": false); so does SIGUSR1. Exit 1 when
// no explored config is feasible for any model, with the reasons. Under mpirun (framework/cluster)
// rank 0 runs the search and writes the outputs; the other ranks evaluate configs for it.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "phaze/cluster/cluster.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"
#include "phaze/report/search_report.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/search/search_checkpoint.hpp"
#include "phaze/search/search_driver.hpp"

namespace po = boost::program_options;

namespace phaze::cli {

void AddSearchOptions(po::options_description& d) {
  d.add_options()("threads", po::value<int>(), "evaluate this many configs at once (default: the "
                                                "run config's search.threads, 0 = all cores)")(
      "output-dir", po::value<std::string>(), "output directory (default: output.directory)")(
      "max-configs", po::value<std::int64_t>(), "stop after this many configs (search.max_configs)")(
      "resume", po::value<std::string>(), "continue the search whose output directory is DIR "
                                          "from its checkpoint (DIR/search.checkpoint)");
}

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int) { g_interrupted = true; }

// Installs the stop handler for the lifetime of the search and restores the previous ones:
// Ctrl-C (SIGINT), SIGTERM (what a batch scheduler sends before it kills a job), and SIGUSR1,
// which mpirun forwards to every rank (`kill -USR1 <mpirun pid>` stops a distributed search with
// partial results; mpirun answers Ctrl-C and SIGTERM by killing the job).
class InterruptGuard {
 public:
  InterruptGuard()
      : previous_int_(std::signal(SIGINT, OnInterrupt)),
        previous_term_(std::signal(SIGTERM, OnInterrupt)),
        previous_usr1_(std::signal(SIGUSR1, OnInterrupt)) {
    g_interrupted = false;
  }
  ~InterruptGuard() {
    std::signal(SIGINT, previous_int_);
    std::signal(SIGTERM, previous_term_);
    std::signal(SIGUSR1, previous_usr1_);
  }

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
  void (*previous_usr1_)(int);
};

}  // namespace

namespace {

// What a search would lose or write over, refused before it runs: -o naming the output
// directory or one of the files it writes there, and (without --resume) a directory holding an
// unfinished search — a checkpoint journal whose results.json is missing or says "complete":
// false —, which a fresh run would replace.
void CheckSearchOutputs(const std::string& directory, const std::string& o, bool resuming) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(directory, ec);
  if (!o.empty()) {
    const fs::path file = fs::weakly_canonical(o, ec);
    if (file == dir) {
      throw UsageError("-o " + o +
                       ": that is the output directory; -o takes a file for "
                       "results.json's copy");
    }
    const std::string name = file.filename().string();
    if (file.parent_path() == dir && std::find(kSearchOutputFiles.begin(), kSearchOutputFiles.end(),
                                               name) != kSearchOutputFiles.end()) {
      throw UsageError("-o " + o + ": the search writes its own " + name + " into " + directory +
                       "/; give -o another file");
    }
    if (fs::is_directory(o, ec)) throw UsageError("cannot write '" + o + "': it is a directory");
  }
  if (resuming || !fs::exists(fs::path(directory) / SearchCheckpoint::kFileName, ec)) return;
  std::ifstream results(fs::path(directory) / "results.json");
  std::string head(512, '\0');
  results.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(results.gcount()));
  if (head.find("\"complete\": true") != std::string::npos) return;
  throw UsageError(directory + "/ holds an unfinished search (" + SearchCheckpoint::kFileName +
                   (results ? ", results.json with \"complete\": false" : ", no results.json") +
                   "): `phaze search --resume " + directory +
                   "` continues it; to start afresh, give another --output-dir or remove " +
                   directory + "/" + SearchCheckpoint::kFileName);
}

}  // namespace

int RunSearch(CommandContext& ctx) {
  std::string resume, config = ctx.global.config;
  if (ctx.vm.count("resume")) {
    resume = ctx.vm["resume"].as<std::string>();
    if (ctx.vm.count("output-dir") && ctx.vm["output-dir"].as<std::string>() != resume) {
      throw UsageError("--resume " + resume + " continues the search writing there: --output-dir "
                       "must be left out or the same directory");
    }
    if (config.empty()) {
      config = SearchCheckpoint::RunConfigPath(
          (std::filesystem::path(resume) / SearchCheckpoint::kFileName).string());
    }
  }
  if (config.empty()) {
    throw UsageError("phaze search: --config RUN.yaml is required (see share/runs/)");
  }
  RunConfig run = RunConfig::ParseFile(config);
  for (const std::string& w : run.warnings) ctx.log.Warn(w);
  if (ctx.vm.count("max-configs")) {
    const auto n = ctx.vm["max-configs"].as<std::int64_t>();
    if (n < 0) throw UsageError("--max-configs: expected 0 (no limit) or a positive integer");
    run.search.max_configs = n;
  }
  if (ctx.vm.count("output-dir")) run.output.directory = ctx.vm["output-dir"].as<std::string>();
  if (!resume.empty()) run.output.directory = resume;
  SearchDriverOptions options;
  if (ctx.vm.count("threads")) {
    options.threads = ctx.vm["threads"].as<int>();
    if (options.threads < 1) throw UsageError("--threads: expected a positive integer");
  }
  if (const std::int64_t wanted = options.threads > 0 ? options.threads : run.search.threads;
      wanted > MaxSearchThreads()) {
    ctx.log.Warn((options.threads > 0 ? "--threads " : "search.threads ") + std::to_string(wanted) +
                 ": more than this machine can use; evaluating with " +
                 std::to_string(MaxSearchThreads()) + " threads (4 per hardware thread, at least 64)");
  }
  ctx.log.Verbose("effective run config:\n" + run.ToJson().Dump());

  // The models and components first, so that a mistake in them is what a run reports (not
  // another run holding the output directory); then rank 0, which writes the results, claims
  // the directory before anything is evaluated.
  const SearchContext context(run, ctx.registry, ctx.log);
  std::optional<OutputDirectory> output;
  if (!(ctx.cluster && ctx.cluster->Rank() > 0)) {
    CheckSearchOutputs(run.output.directory, ctx.global.output, !resume.empty());
    output.emplace(run.output.directory);
    if (resume.empty() &&
        std::filesystem::exists(std::filesystem::path(run.output.directory) / "results.json")) {
      ctx.log.Info(run.output.directory +
                   "/ holds an earlier search's results: this one replaces "
                   "them");
    }
  }

  InterruptGuard guard;
  options.stop = &g_interrupted;
  options.checkpoint =
      (std::filesystem::path(run.output.directory) / SearchCheckpoint::kFileName).string();
  options.resume = !resume.empty();
  std::unique_ptr<RemoteEvaluator> coordinator;
  if (ctx.cluster && ctx.cluster->Distributed()) {
    if (ctx.cluster->Rank() > 0) {  // a worker: evaluate what rank 0 sends, print nothing
      ctx.cluster->Serve(context.Fingerprint(), context.SearchThreads(options.threads),
                         [&](std::int64_t i, const Incumbent* incumbent) {
                           return context.Evaluate(
                               context.Configs().at(static_cast<std::size_t>(i)), incumbent);
                         });
      return 0;
    }
    coordinator = ctx.cluster->Coordinator(context.Fingerprint());
    options.remote = coordinator.get();
    options.local_name = ctx.cluster->Where(0);
    options.processes = ctx.cluster->Size();
    ctx.log.Info("distributed search: " + std::to_string(ctx.cluster->Size()) + " ranks");
  }
  const SearchResults results = RunSearchDriver(context, ctx.progress, options);
  if (const auto shown = static_cast<std::int64_t>(results.outcome.explored.size());
      results.resumed > shown) {
    ctx.log.Warn("--resume " + resume + ": the checkpoint holds " +
                 std::to_string(results.resumed) + " configs and search.max_configs " +
                 std::to_string(run.search.max_configs) + " reports the first " +
                 std::to_string(shown) +
                 "; the journal keeps the rest (resume without a smaller "
                 "--max-configs to report them)");
  }
  WriteSearchOutputs(results, *output, run.output.plots);
  if (!ctx.global.output.empty()) {
    WriteTextFileAtomic(ctx.global.output, [&](std::ostream& out) {
      WriteSearchResultsJson(out, results, 1);
      out << '\n';
    });
  }
  ctx.out << SearchSummary(results) << "outputs in " << run.output.directory << "/\n";
  if (results.outcome.stop_reason == StopReason::kInterrupted) {
    ctx.err << "interrupted: partial results written (results.json has \"complete\": false); "
               "`phaze search --resume " << run.output.directory << "` continues it\n";
    return static_cast<int>(ExitCode::kInterrupted);
  }
  if (!results.AnyFeasible()) {
    ctx.err << "no explored architecture is feasible for any model:\n";
    if (!results.outcome.explored.empty()) {
      for (const auto& m : results.outcome.explored.front().evaluation.models) {
        ctx.err << "  " << m.model << " on " << results.outcome.explored.front().point.arch.name
                << ": " << m.best.reason << "\n";
      }
    }
    return static_cast<int>(ExitCode::kNoFeasibleResult);
  }
  return 0;
}

}  // namespace phaze::cli
