#include "phaze/search/arch_search.hpp"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "phaze/core/error.hpp"

namespace phaze {

bool HysteresisConverged(const std::vector<double>& bucket_best, std::int64_t level) {
  const auto n = static_cast<std::int64_t>(bucket_best.size());
  if (level < 1 || n < level) return false;
  bool any_feasible = false;
  for (double v : bucket_best) any_feasible = any_feasible || v > 0;
  if (!any_feasible) return false;
  for (std::int64_t i = n - level; i + 1 < n; ++i) {
    if (bucket_best[i] < bucket_best[i + 1]) return false;
  }
  return true;
}

std::int64_t AreaBucket(double area_um2, double bucket_width_mm2) {
  return static_cast<std::int64_t>(std::floor(area_um2 / (bucket_width_mm2 * 1e6)));
}

namespace {

// The configs being evaluated: handed out in order by Take (to local threads and the remote
// evaluator), filled in by Done/Failed, consumed in order by RunArchSearch's thread.
class SearchQueue final : public WorkSource {
 public:
  struct Slot {
    std::optional<ConfigEvaluation> result;
    bool failed = false;
    std::string where, message;
  };

  SearchQueue(std::int64_t planned, std::function<bool()> may_start)
      : slots_(static_cast<std::size_t>(planned)), may_start_(std::move(may_start)) {}

  std::optional<std::int64_t> Take() override {
    {
      std::lock_guard lock(mutex_);
      if (!ClosedLocked()) {
        ++in_flight_;
        return next_++;
      }
    }
    changed_.notify_all();  // the consumer may be waiting for a config nobody will take
    return std::nullopt;
  }
  bool Closed() override {
    std::lock_guard lock(mutex_);
    return ClosedLocked();
  }
  void Done(std::int64_t index, ConfigEvaluation result) override {
    Fill(index, [&](Slot& s) { s.result = std::move(result); });
  }
  void Failed(std::int64_t index, const std::string& where, const std::string& message) override {
    Fill(index, [&](Slot& s) {
      s.failed = true;
      s.where = where;
      s.message = message;
    });
  }
  void Abort(const std::string& message) override {
    {
      std::lock_guard lock(mutex_);
      if (!abort_) abort_ = message;
      closed_ = true;
    }
    changed_.notify_all();
  }
  // No more configs are handed out.
  void Close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  // Waits for config `index`. Empty slot: nobody will ever evaluate it (budget, stop). Sets
  // `abort` when the search was aborted.
  Slot Wait(std::int64_t index, std::optional<std::string>& abort) {
    std::unique_lock lock(mutex_);
    auto& slot = slots_[static_cast<std::size_t>(index)];
    changed_.wait(lock, [&] {
      if (slot.result || slot.failed || abort_) return true;
      // Not yet taken, nothing running that could take it, and nothing may start.
      if (next_ > index || in_flight_ > 0) return false;
      return ClosedLocked();
    });
    abort = abort_;
    return std::move(slot);
  }

 private:
  // Nothing more will be handed out (the mutex is held): closed, the list handed out, or a
  // budget or the stop flag forbids new evaluations.
  bool ClosedLocked() {
    closed_ = closed_ || next_ >= static_cast<std::int64_t>(slots_.size()) || !may_start_();
    return closed_;
  }

  template <typename F>
  void Fill(std::int64_t index, F&& set) {
    {
      std::lock_guard lock(mutex_);
      set(slots_.at(static_cast<std::size_t>(index)));
      --in_flight_;
    }
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Slot> slots_;
  std::function<bool()> may_start_;
  std::int64_t next_ = 0;
  std::int64_t in_flight_ = 0;
  bool closed_ = false;
  std::optional<std::string> abort_;
};

std::string Message(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace

ArchSearchOutcome RunArchSearch(const std::vector<ArchPoint>& configs,
                                const ArchSearchOptions& options, const ConfigEvaluator& evaluate,
                                ProgressSink& progress, const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  ArchSearchOutcome out;
  out.candidates = static_cast<std::int64_t>(configs.size());
  const std::int64_t planned =
      options.max_configs > 0 ? std::min(options.max_configs, out.candidates) : out.candidates;

  SearchQueue queue(planned, [&] {
    if (stop && stop->load()) return false;
    return !(options.max_seconds > 0 && elapsed() > options.max_seconds);
  });
  auto worker = [&] {
    while (const auto i = queue.Take()) {
      try {
        const auto t0 = Clock::now();
        ConfigEvaluation result = evaluate(configs[static_cast<std::size_t>(*i)]);
        result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        queue.Done(*i, std::move(result));
      } catch (...) {
        queue.Failed(*i, options.local_name, Message(std::current_exception()));
      }
    }
  };
  const int threads = std::max(options.remote ? 0 : 1, options.threads);
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error& e) {  // the system ran out of threads: go on with those made
      if (pool.empty() && !options.remote) {
        throw Error(std::string("cannot start an evaluation thread: ") + e.what());
      }
      break;
    }
  }
  std::optional<std::string> remote_failure;  // may come after the last result was read
  if (options.remote) {
    pool.emplace_back([&] {
      try {
        options.remote->Serve(queue);
      } catch (...) {
        remote_failure = Message(std::current_exception());
        queue.Abort(*remote_failure);
      }
    });
  }

  progress.Begin("search", planned);
  double best = 0;
  double bucket_best = 0;
  std::optional<std::string> failure;
  for (std::int64_t i = 0; i < planned; ++i) {
    std::optional<std::string> abort;
    SearchQueue::Slot slot = queue.Wait(i, abort);
    if (abort) {
      failure = *abort;
      break;
    }
    if (slot.failed) {
      failure = "evaluating architecture " + configs[static_cast<std::size_t>(i)].arch.name +
                (slot.where.empty() ? "" : " on " + slot.where) + ": " + slot.message;
      break;
    }
    if (!slot.result) {
      out.stop_reason = (stop && stop->load()) ? "interrupted" : "max_seconds";
      break;
    }
    ExploredConfig e;
    e.rank = i;
    e.point = configs[static_cast<std::size_t>(i)];
    e.bucket = AreaBucket(e.point.area_um2, options.bucket_width_mm2);
    e.evaluation = std::move(*slot.result);
    best = std::max(best, e.evaluation.score);
    bucket_best = std::max(bucket_best, e.evaluation.score);
    out.explored.push_back(std::move(e));
    char note[96];
    std::snprintf(note, sizeof note, "best %.6g samples/s", best);
    progress.Update(i + 1, note);

    const bool bucket_ends =
        i + 1 == out.candidates ||
        AreaBucket(configs[static_cast<std::size_t>(i + 1)].area_um2, options.bucket_width_mm2) !=
            out.explored.back().bucket;
    if (bucket_ends) {
      out.bucket_best.push_back(bucket_best);
      bucket_best = 0;
      ++out.buckets_done;
      if (!options.exhaustive && HysteresisConverged(out.bucket_best, options.hysteresis_level)) {
        out.stop_reason = "converged";
        break;
      }
    }
  }
  queue.Close();
  for (auto& t : pool) t.join();
  progress.End();
  if (!failure) failure = remote_failure;
  if (failure) throw Error(*failure);
  if (out.stop_reason.empty()) {
    out.stop_reason = planned < out.candidates ? "max_configs" : "exhausted";
  }
  return out;
}

}  // namespace phaze
