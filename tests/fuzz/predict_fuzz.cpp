// libFuzzer target: `phaze predict`'s flags, through the host's own entry (phaze::cli::RunApp) with
// the plugins this build produced. The input is lines of `flag value` (or a bare `flag`): every
// predict flag that takes a number or a list (--plan, --micro-batch, --global-batch, --stage-starts,
// --hbm-gib, --tokens, --hourly-usd, --accelerators, --recompute, --sequence-parallel) gets the
// fuzzer's text as written; --model, --arch and --system pick from the shipped files by name only
// (a path could name /dev/zero). Oracles, independent of the code under test:
//   * the exit code is 0 (a prediction), 1 (a valid plan that does not fit) or 2 (a refused input
//     with a message naming a flag or the plan): never 3, an internal error;
//   * an exit 2 message names the flag (`--…`) or the plan it refuses;
//   * nothing printed contains `inf` or `nan` as a number.
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "phaze/cli/app.hpp"

namespace {

// Models and chips whose predictions take milliseconds in a release build (a second or more under
// the fuzz build's sanitizers). Not the TPU presets: their layer ILPs take seconds on BERT-large
// and minutes on Mixtral's 82-op backward segments (share/runs/hf.yaml, max_exact_ops).
const char* const kModels[] = {"tiny-gpt", "llama2-7b", "megatron-gpt3-175b", "mixtral-8x7b"};
const char* const kArchs[] = {"a100-sxm-80gb", "h100-sxm-80gb"};
const char* const kValueFlags[] = {"plan",   "micro-batch", "global-batch", "stage-starts",
                                   "hbm-gib", "tokens",     "hourly-usd",   "accelerators",
                                   "recompute"};

bool IsName(const std::string& s) {
  if (s.empty() || s.size() > 40) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
  }
  return true;
}

template <std::size_t N>
std::string Pick(const char* const (&names)[N], const std::string& value) {
  std::size_t h = 0;
  for (char c : value) h = h * 31 + static_cast<unsigned char>(c);
  for (const char* n : names) {
    if (value == n) return n;
  }
  return names[h % N];
}

}  // namespace

// Every call loads the plugins and unloads them when its registry goes; an instrumented module
// that is unmapped leaves libFuzzer's coverage counters dangling. Opening each plugin once with
// RTLD_NODELETE keeps it mapped for the whole run (the registry's own loads share the handle).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (const auto& e : std::filesystem::directory_iterator(PHAZE_PLUGIN_DIR)) {
    if (e.path().extension() != ".so") continue;
    if (dlopen(e.path().c_str(), RTLD_NOW | RTLD_NODELETE) == nullptr) {
      std::cerr << "predict_fuzz: cannot load " << e.path() << ": " << dlerror() << "\n";
      std::abort();
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string model = "tiny-gpt", arch = "a100-sxm-80gb";
  std::vector<std::string> args;
  bool plan = false, micro = false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto space = line.find(' ');
    const std::string flag = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (flag == "model") {
      model = Pick(kModels, value);
    } else if (flag == "arch") {
      arch = Pick(kArchs, value);
    } else if (flag == "system") {
      if (IsName(value)) args.insert(args.end(), {"--system", value});
    } else if (flag == "sequence-parallel") {
      args.push_back("--sequence-parallel");
    } else {
      for (const char* f : kValueFlags) {
        if (flag != f) continue;
        args.insert(args.end(), {"--" + flag, value});
        plan |= flag == "plan";
        micro |= flag == "micro-batch";
      }
    }
  }
  std::vector<std::string> argv = {"predict", "--model",
                                    std::string(PHAZE_SOURCE_DIR) + "/workloads/" + model + ".yaml",
                                    "--arch", arch};
  if (!plan) argv.insert(argv.end(), {"--plan", "1,1,1"});
  if (!micro) argv.insert(argv.end(), {"--micro-batch", "1"});
  argv.insert(argv.end(), args.begin(), args.end());

  phaze::cli::Environment env;
  env.plugin_path = PHAZE_PLUGIN_DIR;
  std::ostringstream out, err;
  const int code = phaze::cli::RunApp(argv, env, out, err);
  auto fail = [&](const char* why) {
    std::cerr << "predict_fuzz: " << why << "\nargs:";
    for (const auto& a : argv) std::cerr << " '" << a << "'";
    std::cerr << "\nexit " << code << "\nstdout:\n" << out.str() << "stderr:\n" << err.str();
    std::abort();
  };
  if (code != 0 && code != 1 && code != 2) fail("exit code other than 0, 1 or 2");
  if (code == 2 && err.str().find("--") == std::string::npos &&
      err.str().find("plan") == std::string::npos) {
    fail("a refused input whose message names no flag");
  }
  static const std::regex non_finite(R"((^|[^A-Za-z])(inf|nan)([^A-Za-z]|$))",
                                     std::regex::icase);
  if (std::regex_search(out.str(), non_finite)) fail("a non-finite number printed");
  return 0;
}
