#include "phaze/cli/app.hpp"

#include <boost/program_options.hpp>
#include <functional>
#include <map>
#include <sstream>

#include "commands.hpp"
#include "phaze/cli/command_context.hpp"
#include "phaze/cluster/cluster.hpp"
#include "phaze/core/error.hpp"
#include "phaze/plugin/plugin_abi.hpp"
#include "phaze/version.hpp"

namespace po = boost::program_options;

namespace phaze::cli {

namespace {

struct CommandSpec {
  std::string name;
  std::string summary;
  std::function<void(po::options_description&)> add_options;
  std::function<int(CommandContext&)> run;
  bool reads_config = true;  // false: the global --config would be ignored, so it is refused
};

std::vector<CommandSpec> Commands() {
  return {
      {"search", "architecture + placement search over a run config (--config RUN.yaml)",
       AddSearchOptions, RunSearch},
      {"predict", "time, memory and throughput of one training plan (no search)", AddPredictOptions,
       RunPredict},
      {"plan", "the fastest launchable plans for a model on a cluster, with Megatron-LM args",
       AddPlanOptions, RunPlan},
      {"place", "device placement (pipeline/data/tensor parallel DP) from a layer table",
       AddPlaceOptions, RunPlace, false},
      {"schedule", "optimal operator schedule (ILP) of one layer on one accelerator",
       AddScheduleOptions, RunSchedule},
      {"graph", "operator and layer graph of a workload (summary, JSON or DOT)", AddGraphOptions,
       RunGraph},
      {"arch", "enumerate an architecture space or show a preset, with areas", AddArchOptions,
       RunArch},
      {"estimate", "per-operator latency and collective time on an architecture",
       AddEstimateOptions, RunEstimate},
      {"plugins", "list the plugins found and the components they register", AddPluginsOptions,
       RunPlugins, false},
  };
}

po::options_description GlobalDescription() {
  po::options_description g("Global options");
  g.add_options()("help,h", "show help (for a command: phaze COMMAND --help)")(
      "version", "print the version and exit")("config", po::value<std::string>(),
                                               "run configuration (YAML)")(
      "plugin", po::value<std::vector<std::string>>()->composing(),
      "load a plugin shared object (repeatable)")(
      "plugin-dir", po::value<std::vector<std::string>>()->composing(),
      "load every *.so in a directory (repeatable)")("no-default-plugins",
                                                     "do not load <dir of phaze>/plugins")(
      "output,o", po::value<std::string>(), "write the result as JSON to FILE")(
      "verbose,v", po::value<std::vector<std::string>>()->zero_tokens()->composing(),
      "more output on stderr (repeat for more: -vv)")(
      "quiet,q", "stderr: errors only, no progress (results still go to stdout and -o)")(
      "progress", "draw progress even when stderr is not a terminal");
  return g;
}

std::string Usage(const std::vector<CommandSpec>& cmds) {
  std::ostringstream os;
  os << "Usage: phaze [global options] COMMAND [command options]\n\n"
     << "Co-search of a training accelerator's architecture and its distributed training plan\n"
     << "(ICML 2024 \"Integrated Hardware Architecture and Device Placement Search\").\n\n"
     << "Commands:\n";
  for (const auto& c : cmds) {
    os << "  " << c.name << std::string(10 - std::min<size_t>(9, c.name.size()), ' ') << c.summary
       << "\n";
  }
  os << "\n"
     << GlobalDescription() << "\n"
     << "Plugins are loaded from --plugin, --plugin-dir, PHAZE_PLUGIN_PATH (colon-separated) and\n"
     << "<dir of phaze>/plugins. Exit codes: 0 success, 1 no feasible result, 2 usage/config/\n"
     << "plugin error, 3 internal error, 4 search interrupted (partial results written).\n";
  return os.str();
}

// Finds the command word: the first token that is neither an option nor an option's value.
// `all` knows every option of every command, so `--model FILE search` is understood.
int FindCommand(const std::vector<std::string>& args, const po::options_description& all) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return -1;
    if (a.size() > 1 && a[0] == '-') {
      if (a.find('=') != std::string::npos) continue;
      const po::option_description* d = nullptr;
      if (a[1] == '-') {
        d = all.find_nothrow(a.substr(2), false);
      } else if (a.size() == 2) {  // "-o FILE"; grouped or sticky short options take no next token
        for (const auto& opt : all.options()) {
          if (opt->canonical_display_name(po::command_line_style::allow_dash_for_short) == a) {
            d = opt.get();
          }
        }
      }
      if (d && d->semantic()->max_tokens() > 0) ++i;
      continue;
    }
    return static_cast<int>(i);
  }
  return -1;
}

int ExitFor(ExitCode c) { return static_cast<int>(c); }

}  // namespace

int RunApp(const std::vector<std::string>& args, const Environment& env, std::ostream& out,
           std::ostream& err) {
  const auto cmds = Commands();
  // Outlives the handlers below: an exception thrown by plugin code must not outlive the plugin.
  Registry registry;
  const bool worker = env.cluster && env.cluster->Rank() > 0;
  bool worker_verbose = false;
  // An error: printed, and on a worker rank reported to rank 0 instead (printed with --verbose).
  auto fail = [&](ExitCode code, const std::string& kind, const std::string& what,
                  const std::string& hint = "") {
    if (worker) env.cluster->SetFailure(what);
    if (!worker || worker_verbose) {
      err << (worker ? env.cluster->Where(env.cluster->Rank()) + ": " : std::string()) << kind
          << what << "\n" << hint;
    }
    return ExitFor(code);
  };
  try {
    // Boost.Program_options (1.74) quotes an argument in its error messages by replacing its
    // placeholders (%value%, %canonical_option%, …) until none is left, so a bad argument that
    // contains one never finishes (found by tests/fuzz/predict_fuzz: `--micro-batch '%value%'`
    // hung). Such an argument is refused before parsing, naming its flag.
    for (std::size_t i = 0; i < args.size(); ++i) {
      for (const char* token : {"%value%", "%canonical_option%", "%original_token%", "%option%",
                                "%prefix_option%"}) {
        if (args[i].find(token) == std::string::npos) continue;
        const bool value = i > 0 && args[i - 1].rfind("-", 0) == 0 && args[i].rfind("-", 0) != 0;
        throw UsageError((value ? args[i - 1] + ": " : std::string()) + "the argument '" +
                         args[i] + "' contains '" + token + "', which phaze's option parser "
                         "(Boost.Program_options) cannot quote in its messages; rename it");
      }
    }
    po::options_description all("all");
    all.add(GlobalDescription());
    std::map<std::string, po::options_description> cmd_desc;
    for (const auto& c : cmds) {
      po::options_description d(c.name + " options");
      c.add_options(d);
      for (const auto& opt : d.options()) {
        if (!all.find_nothrow(opt->long_name(), false)) all.add(opt);
      }
      cmd_desc.emplace(c.name, std::move(d));
    }

    int at = FindCommand(args, all);
    std::vector<std::string> rest = args;
    const CommandSpec* cmd = nullptr;
    if (at >= 0) {
      std::string name = args[static_cast<size_t>(at)];
      for (const auto& c : cmds) {
        if (c.name == name) cmd = &c;
      }
      if (!cmd) {
        std::vector<std::string> names;
        for (const auto& c : cmds) names.push_back(c.name);
        std::string msg = "unknown command '" + name + "'";
        if (auto g = DidYouMean(name, names)) msg += "; did you mean '" + *g + "'?";
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        throw UsageError(msg + " (commands: " + list + ")");
      }
      rest.erase(rest.begin() + at);
    }

    po::options_description parse_desc;
    parse_desc.add(GlobalDescription());
    if (cmd) parse_desc.add(cmd_desc.at(cmd->name));
    po::variables_map vm;
    po::parsed_options parsed = po::command_line_parser(rest).options(parse_desc).run();
    // No command takes a bare word: one is a mistake (a value without its flag, a second
    // command), not something to ignore.
    for (const auto& o : parsed.options) {
      if (o.position_key < 0 && !o.string_key.empty()) continue;
      const std::string word =
          o.original_tokens.empty() ? std::string() : o.original_tokens.front();
      throw UsageError(
          "unexpected argument '" + word + "'" +
          (cmd ? " to phaze " + cmd->name + " (phaze " + cmd->name + " --help)" : std::string()));
    }
    try {
      po::store(parsed, vm);
    } catch (const po::invalid_option_value& e) {
      throw UsageError(InvalidValueMessage(e, parse_desc));
    }
    po::notify(vm);

    if (worker && (!cmd || cmd->name != "search")) return 0;  // only the search is distributed
    if (vm.count("version")) {
      out << "phaze " << kVersion << " (plugin ABI " << plugin::kAbiVersion << ", build "
          << kBuildFingerprint << ")\n";
      return 0;
    }
    if (vm.count("help")) {
      if (cmd) {
        out << "Usage: phaze " << cmd->name << " [options]\n"
            << cmd->summary << "\n\n"
            << cmd_desc.at(cmd->name) << "\n"
            << GlobalDescription();
      } else {
        out << Usage(cmds);
      }
      return 0;
    }
    if (!cmd) throw UsageError("no command given\n" + Usage(cmds));

    GlobalOptions g;
    if (vm.count("config")) {
      if (!cmd->reads_config) {
        throw UsageError("--config: phaze " + cmd->name +
                         " reads no run configuration; drop --config (see phaze " + cmd->name +
                         " --help for what it reads)");
      }
      g.config = vm["config"].as<std::string>();
    }
    if (vm.count("output")) g.output = vm["output"].as<std::string>();
    if (vm.count("plugin")) g.plugins.files = vm["plugin"].as<std::vector<std::string>>();
    if (vm.count("plugin-dir"))
      g.plugins.directories = vm["plugin-dir"].as<std::vector<std::string>>();
    g.plugins.env_path = env.plugin_path;
    g.plugins.use_default_directory = vm.count("no-default-plugins") == 0;
    int verbose_count = 0;
    for (const auto& o : parsed.options) {
      if (o.string_key == "verbose") ++verbose_count;
    }
    if (vm.count("quiet") && verbose_count)
      throw UsageError("--quiet and --verbose exclude each other");
    g.verbosity = vm.count("quiet") ? 0 : 1 + verbose_count;
    if (worker) {  // worker ranks are silent unless asked: rank 0 reports for the run
      worker_verbose = verbose_count > 0;
      g.verbosity = worker_verbose ? g.verbosity : 0;
    }
    g.progress = g.verbosity > 0 && (env.stderr_is_terminal || vm.count("progress"));

    Logger log(err, static_cast<LogLevel>(std::min(g.verbosity, 3)));
    NullProgress null_progress;
    StderrProgress stderr_progress(err);
    ProgressSink& progress = g.progress ? static_cast<ProgressSink&>(stderr_progress)
                                        : static_cast<ProgressSink&>(null_progress);
    for (const auto& f : PluginLoader::LoadAll(g.plugins, registry)) {
      log.Verbose("loaded plugin " + f.string());
    }
    CommandContext ctx{g, vm, registry, out, err, log, progress, env.cluster};
    return cmd->run(ctx);
  } catch (const po::error& e) {
    return fail(ExitCode::kUsageError, "error: ", e.what(), "Try 'phaze --help'.\n");
  } catch (const InvalidArgumentError& e) {
    return fail(ExitCode::kInternalError, "internal error: ", e.what());
  } catch (const Error& e) {
    const std::string hint = OtherFileKindHint(e.what());
    return fail(ExitCode::kUsageError, "error: ", e.what(), hint.empty() ? "" : "  " + hint + "\n");
  } catch (const std::exception& e) {
    return fail(ExitCode::kInternalError, "internal error: ", e.what());
  }
}

}  // namespace phaze::cli
