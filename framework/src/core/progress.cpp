#include "phaze/core/progress.hpp"

#include <cmath>
#include <cstdio>
#include <fmt/printf.h>

namespace phaze {

StderrProgress::StderrProgress(std::ostream& out, double min_interval_s, Clock clock)
    : out_(out), min_interval_s_(min_interval_s), clock_(std::move(clock)) {
  if (!clock_) {
    clock_ = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
}

std::string StderrProgress::FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<long long>(std::llround(seconds));
  std::string buf;
  if (s < 60) {
    buf = fmt::sprintf("%llds", s);
  } else if (s < 3600) {
    buf = fmt::sprintf("%lldm%02llds", s / 60, s % 60);
  } else {
    buf = fmt::sprintf("%lldh%02lldm", s / 3600, (s % 3600) / 60);
  }
  return buf;
}

std::string StderrProgress::FormatLine(const std::string& phase, std::int64_t done,
                                       std::int64_t total, double elapsed_s,
                                       const std::string& note) {
  std::string line = phase + " " + std::to_string(done);
  if (total > 0) {
    std::string pct = fmt::sprintf("%.0f%%", 100.0 * static_cast<double>(done) / total);
    line += "/" + std::to_string(total) + " (" + pct + ")";
  }
  line += " elapsed " + FormatDuration(elapsed_s);
  if (total > 0 && done > 0 && done < total) {
    double eta = elapsed_s * static_cast<double>(total - done) / static_cast<double>(done);
    line += " ETA " + FormatDuration(eta);
  }
  if (!note.empty()) line += "  " + note;
  return line;
}

void StderrProgress::Begin(const std::string& phase, std::int64_t total) {
  std::lock_guard lock(mutex_);
  phase_ = phase;
  total_ = total;
  done_ = 0;
  note_.clear();
  start_s_ = clock_();
  last_draw_s_ = -1e300;
  active_ = true;
  Draw(true);
}

void StderrProgress::Update(std::int64_t done, const std::string& note) {
  std::lock_guard lock(mutex_);
  done_ = done;
  if (!note.empty()) note_ = note;
  Draw(false);
}

void StderrProgress::End() {
  std::lock_guard lock(mutex_);
  if (!active_) return;
  Draw(true);
  out_ << "\n" << std::flush;
  active_ = false;
  last_width_ = 0;
}

void StderrProgress::Draw(bool force) {
  double now = clock_();
  if (!force && now - last_draw_s_ < min_interval_s_) return;
  last_draw_s_ = now;
  std::string line = FormatLine(phase_, done_, total_, now - start_s_, note_);
  size_t width = line.size();
  if (width < last_width_) line.append(last_width_ - width, ' ');  // erase leftovers
  last_width_ = width;
  out_ << "\r" << line << std::flush;
}

}  // namespace phaze
