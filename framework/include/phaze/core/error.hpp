// Error types of Phaze. Misuse, bad input and broken plugins are exceptions derived from
// phaze::Error; algorithmic outcomes (infeasible ILP, stage out of memory) are values, never these.
// The host maps each type to an exit code (see ExitCode).
#pragma once

#include <stdexcept>
#include <string>

namespace phaze {

// Process exit codes of the `phaze` host, documented in the README.
enum class ExitCode : int {
  kSuccess = 0,
  kNoFeasibleResult = 1,  // valid input, but nothing feasible was found
  kUsageError = 2,        // bad command line, config, model file or plugin
  kInternalError = 3,     // a bug: an unexpected exception
  kInterrupted = 4,       // stopped by Ctrl-C or SIGTERM: partial results written (search)
};

// Base of every exception Phaze throws on purpose. what() is the full user-facing message.
// Every class here has its destructor defined in libphaze_framework (a key function), so the
// vtable and type info live in the framework, not in a plugin that throws one: an exception thrown
// by plugin code stays valid after the plugin is unloaded.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  ~Error() override;
};

// Bad command line (unknown flag, missing argument, unknown subcommand).
class UsageError : public Error {
 public:
  using Error::Error;
  ~UsageError() override;
};

// Bad configuration or input file; the message starts with "file:line:col: key.path: ".
class ConfigError : public Error {
 public:
  using Error::Error;
  ~ConfigError() override;
};

// A plugin failed to load, register or construct a component.
class PluginError : public Error {
 public:
  using Error::Error;
  ~PluginError() override;
};

// A caller broke a documented precondition of a framework API (invalid model index, …).
class InvalidArgumentError : public Error {
 public:
  using Error::Error;
  ~InvalidArgumentError() override;
};

}  // namespace phaze
