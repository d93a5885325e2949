#include "phaze/search/arch_search.hpp"

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>
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

  struct Slot {
    std::optional<ConfigEvaluation> result;
    std::exception_ptr error;
  };
  std::vector<Slot> slots(static_cast<std::size_t>(planned));
  std::mutex mutex;
  std::condition_variable filled;
  std::atomic<std::int64_t> next{0};
  std::atomic<bool> halt{false};  // no new evaluations
  std::atomic<std::int64_t> in_flight{0};

  auto may_start = [&] {
    if (halt.load() || (stop && stop->load())) return false;
    return !(options.max_seconds > 0 && elapsed() > options.max_seconds);
  };
  // in_flight changes under the mutex so the consumer's wait cannot miss a worker leaving.
  auto leave = [&] {
    {
      std::lock_guard lock(mutex);
      --in_flight;
    }
    filled.notify_all();
  };
  auto worker = [&] {
    while (true) {
      {
        std::lock_guard lock(mutex);
        ++in_flight;
      }
      if (!may_start()) {
        leave();
        break;
      }
      const std::int64_t i = next.fetch_add(1);
      if (i >= planned) {
        leave();
        break;
      }
      Slot slot;
      try {
        const auto t0 = Clock::now();
        slot.result = evaluate(configs[static_cast<std::size_t>(i)]);
        slot.result->seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      } catch (...) {
        slot.error = std::current_exception();
      }
      {
        std::lock_guard lock(mutex);
        slots[static_cast<std::size_t>(i)] = std::move(slot);
        --in_flight;
      }
      filled.notify_all();
    }
  };
  const int threads = std::max(1, options.threads);
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) pool.emplace_back(worker);
  auto finish = [&] {
    halt = true;
    for (auto& t : pool) t.join();
    pool.clear();
  };

  progress.Begin("search", planned);
  double best = 0;
  double bucket_best = 0;
  std::exception_ptr failure;
  std::string failed_config;
  for (std::int64_t i = 0; i < planned; ++i) {
    Slot slot;
    {
      std::unique_lock lock(mutex);
      // Wait for config i, unless nobody will ever evaluate it (budget, stop).
      filled.wait(lock, [&] {
        return slots[static_cast<std::size_t>(i)].result ||
               slots[static_cast<std::size_t>(i)].error ||
               (next.load() <= i && in_flight.load() == 0 && !may_start());
      });
      slot = std::move(slots[static_cast<std::size_t>(i)]);
    }
    if (slot.error) {
      failure = slot.error;
      failed_config = configs[static_cast<std::size_t>(i)].arch.name;
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
  finish();
  progress.End();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      throw Error("evaluating architecture " + failed_config + ": " + e.what());
    }
  }
  if (out.stop_reason.empty()) {
    out.stop_reason = planned < out.candidates ? "max_configs" : "exhausted";
  }
  return out;
}

}  // namespace phaze
