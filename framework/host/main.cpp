// The `phaze` host executable: the commands are in the phaze_host library (phaze::cli::RunApp,
// host/src/cli), the algorithms in libphaze_framework. Under mpirun, the Cluster
// (host/src/cluster) makes this process one rank of a distributed search.
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "phaze/cli/app.hpp"
#include "phaze/cluster/cluster.hpp"
#include "phaze/core/error.hpp"

int main(int argc, char** argv) {
  phaze::cli::Environment env;
  if (const char* p = std::getenv("PHAZE_PLUGIN_PATH")) env.plugin_path = p;
  env.stderr_is_terminal = isatty(STDERR_FILENO) != 0;
  try {
    phaze::Cluster cluster;
    env.cluster = &cluster;
    const int code = phaze::cli::RunApp({argv + 1, argv + argc}, env, std::cout, std::cerr);
    for (const auto& note : cluster.Finish()) {
      if (code == 0) std::cerr << "warning: " << note << "\n";
    }
    return code;
  } catch (const phaze::Error& e) {  // the cluster could not start
    std::cerr << "error: " << e.what() << "\n";
    return static_cast<int>(phaze::ExitCode::kUsageError);
  }
}
