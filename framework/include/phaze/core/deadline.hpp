// A point on the steady clock by which a computation should stop and return its best answer
// (the scheduler's time limit covers its local search, schedule search and ILP together).
// Default-constructed: never.
#pragma once

#include <chrono>
#include <cmath>
#include <limits>

namespace phaze {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  Deadline() = default;
  // `seconds` from now; infinite, NaN or ≤ 0 in the sense of "no limit" is the caller's choice:
  // a non-finite value gives Never().
  static Deadline In(double seconds) {
    Deadline d;
    if (std::isfinite(seconds)) {
      d.at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(std::max(0.0, seconds)));
      d.finite_ = true;
    }
    return d;
  }
  bool Finite() const { return finite_; }
  bool Passed() const { return finite_ && Clock::now() >= at_; }
  // Seconds left (0 once passed; infinity without a deadline).
  double RemainingS() const {
    if (!finite_) return std::numeric_limits<double>::infinity();
    return std::max(0.0, std::chrono::duration<double>(at_ - Clock::now()).count());
  }

 private:
  Clock::time_point at_{};
  bool finite_ = false;
};

}  // namespace phaze
