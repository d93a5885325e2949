// Leveled logging to an injected stream (stderr in the host). No global logger: the host creates
// one from -v/-q and passes it where needed. Algorithms report through results and ProgressSink;
// the logger is for the host's own notes (which plugins were loaded, where outputs went).
#pragma once

#include <mutex>
#include <ostream>
#include <string>

namespace phaze {

enum class LogLevel { kQuiet = 0, kNormal = 1, kVerbose = 2, kDebug = 3 };

class Logger {
 public:
  Logger(std::ostream& out, LogLevel level) : out_(out), level_(level) {}
  LogLevel Level() const { return level_; }
  bool Enabled(LogLevel level) const { return level <= level_; }
  void Info(const std::string& msg) { Write(LogLevel::kNormal, "", msg); }
  void Verbose(const std::string& msg) { Write(LogLevel::kVerbose, "", msg); }
  void Debug(const std::string& msg) { Write(LogLevel::kDebug, "debug: ", msg); }
  // Warnings show unless quiet.
  void Warn(const std::string& msg) { Write(LogLevel::kNormal, "warning: ", msg); }

 private:
  void Write(LogLevel level, const char* prefix, const std::string& msg) {
    if (!Enabled(level)) return;
    std::lock_guard lock(mutex_);
    out_ << prefix << msg << "\n";
  }
  std::ostream& out_;
  LogLevel level_;
  std::mutex mutex_;
};

}  // namespace phaze
