// Progress reporting for long runs. Algorithms report through a ProgressSink passed in by the
// caller and never print; the host picks the sink: StderrProgress (a live line on a terminal:
// phase, done/total, elapsed, ETA) or NullProgress (with -q, or when stderr is not a terminal,
// unless --progress forces it).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>

namespace phaze {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // A new phase with `total` units of work (0 = unknown).
  virtual void Begin(const std::string& phase, std::int64_t total) = 0;
  // `done` units finished so far; `note` is an optional short status ("best 1234 samples/s").
  virtual void Update(std::int64_t done, const std::string& note = "") = 0;
  // The phase is over.
  virtual void End() = 0;
};

class NullProgress final : public ProgressSink {
 public:
  void Begin(const std::string&, std::int64_t) override {}
  void Update(std::int64_t, const std::string&) override {}
  void End() override {}
};

// Writes "\r<phase> <done>/<total> (<pct>%) elapsed 12s ETA 34s <note>" at most every
// `min_interval` (and always at End), then a newline at End. Thread-safe.
class StderrProgress final : public ProgressSink {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  explicit StderrProgress(std::ostream& out, double min_interval_s = 0.2, Clock clock = {});
  void Begin(const std::string& phase, std::int64_t total) override;
  void Update(std::int64_t done, const std::string& note = "") override;
  void End() override;

  // The line for the current state (without "\r"), exposed for tests.
  static std::string FormatLine(const std::string& phase, std::int64_t done, std::int64_t total,
                                double elapsed_s, const std::string& note);
  // "45s", "12m03s", "2h05m".
  static std::string FormatDuration(double seconds);

 private:
  void Draw(bool force);
  std::ostream& out_;
  double min_interval_s_;
  Clock clock_;
  std::mutex mutex_;
  std::string phase_, note_;
  std::int64_t total_ = 0, done_ = 0;
  double start_s_ = 0, last_draw_s_ = -1e300;
  size_t last_width_ = 0;
  bool active_ = false;
};

}  // namespace phaze
