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
};

// Base of every exception Phaze throws on purpose. what() is the full user-facing message.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Bad command line (unknown flag, missing argument, unknown subcommand).
class UsageError : public Error {
 public:
  using Error::Error;
};

// Bad configuration or input file; the message starts with "file:line:col: key.path: ".
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A plugin failed to load, register or construct a component.
class PluginError : public Error {
 public:
  using Error::Error;
};

// A feature whose engine does not exist yet; exit code 2 with a clear message.
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

// A caller broke a documented precondition of a framework API (invalid model index, …).
class InvalidArgumentError : public Error {
 public:
  using Error::Error;
};

}  // namespace phaze
