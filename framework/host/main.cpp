// The `phaze` host executable: everything is in libphaze_framework (phaze::cli::RunApp).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "phaze/cli/app.hpp"

int main(int argc, char** argv) {
  phaze::cli::Environment env;
  if (const char* p = std::getenv("PHAZE_PLUGIN_PATH")) env.plugin_path = p;
  env.stderr_is_terminal = isatty(STDERR_FILENO) != 0;
  return phaze::cli::RunApp({argv + 1, argv + argc}, env, std::cout, std::cerr);
}
