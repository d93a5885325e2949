// The `phaze` command line: `phaze [global options] <command> [command options]`.
// Commands: search, place, schedule, graph, arch, estimate, plugins. The host's main() only calls
// RunApp; everything here is library code, so tests can run the CLI in-process as well as through
// the real binary. RunApp never calls exit(): it returns the exit code (see phaze::ExitCode).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace phaze {
class Cluster;
}

namespace phaze::cli {

struct Environment {
  std::string plugin_path;          // the value of PHAZE_PLUGIN_PATH ("" when unset)
  bool stderr_is_terminal = false;  // progress is drawn only on a terminal unless --progress
  // The processes of this run (null: this process alone). On a worker rank (> 0) only `search`
  // runs, nothing is printed unless --verbose, and an error goes to rank 0 (Cluster::SetFailure).
  Cluster* cluster = nullptr;
};

// args excludes argv[0]. Normal output goes to `out`, errors/progress/logs to `err`.
int RunApp(const std::vector<std::string>& args, const Environment& env, std::ostream& out,
           std::ostream& err);

}  // namespace phaze::cli
