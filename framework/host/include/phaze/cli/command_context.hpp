// What every `phaze` subcommand receives: parsed global options, the loaded registry, the output
// streams, a logger and a progress sink. Built by RunApp; commands never parse global flags.
#pragma once

#include <boost/program_options/variables_map.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "phaze/core/logger.hpp"
#include "phaze/core/progress.hpp"
#include "phaze/plugin/plugin_loader.hpp"
#include "phaze/plugin/registry.hpp"

namespace phaze {
class Cluster;
}

namespace phaze::cli {

struct GlobalOptions {
  std::string config;       // --config FILE ("" when absent)
  std::string output;       // --output FILE (JSON), "" when absent
  PluginSources plugins;
  int verbosity = 1;        // 0 quiet, 1 normal, 2+ verbose
  bool progress = false;    // draw progress on stderr
};

struct CommandContext {
  GlobalOptions global;
  const boost::program_options::variables_map& vm;  // command options
  Registry& registry;
  std::ostream& out;
  std::ostream& err;
  Logger& log;
  ProgressSink& progress;
  Cluster* cluster = nullptr;  // null when this process runs alone
};

}  // namespace phaze::cli
