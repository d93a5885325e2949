#include "phaze/search/arch_search.hpp"

#include <algorithm>
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
#include <fmt/printf.h>

#include "phaze/core/error.hpp"

namespace phaze {

std::string_view ToString(StopReason reason) {
  switch (reason) {
    case StopReason::kNone:
      break;
    case StopReason::kConverged:
      return "converged";
    case StopReason::kExhausted:
      return "exhausted";
    case StopReason::kMaxConfigs:
      return "max_configs";
    case StopReason::kMaxSeconds:
      return "max_seconds";
    case StopReason::kInterrupted:
      return "interrupted";
  }
  return "none";
}

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

bool ConfigEvaluation::FullyPruned() const {
  return pruned.has_value() &&
         std::all_of(models.begin(), models.end(), [](const ModelEvaluation& m) { return m.pruned; });
}

bool PruneDecision::All() const {
  return score && std::all_of(models.begin(), models.end(), [](char m) { return m != 0; });
}

PruneDecision DecidePruning(const std::vector<double>& model_bounds, double score_bound,
                            const Incumbent& incumbent) {
  PruneDecision d;
  d.models.assign(model_bounds.size(), 0);
  if (incumbent.throughputs.size() != model_bounds.size()) return d;
  auto below = [](double bound, double incumbent) {
    return bound < incumbent - kBoundSlack * std::abs(incumbent);
  };
  d.score = below(score_bound, incumbent.score);
  if (!d.score) return d;
  for (std::size_t m = 0; m < model_bounds.size(); ++m) {
    d.models[m] = below(model_bounds[m], incumbent.throughputs[m]);
  }
  return d;
}

std::int64_t AreaBucket(double area_um2, double bucket_width_mm2) {
  return static_cast<std::int64_t>(std::floor(area_um2 / (bucket_width_mm2 * 1e6)));
}

namespace {

// The configs being evaluated: handed out in visiting order (positions 0, 1, … of `order`) by
// Take (to local threads and the remote evaluator), with the incumbent when pruning; filled in by
// Done/Failed; consumed in visiting order by RunArchSearch's thread.
class SearchQueue final : public WorkSource {
 public:
  struct Slot {
    std::optional<ConfigEvaluation> result;
    bool failed = false;
    std::string where, message;
  };

  SearchQueue(std::vector<std::int64_t> order, std::int64_t candidates, bool prune,
              std::function<bool()> may_start)
      : order_(std::move(order)),
        position_(static_cast<std::size_t>(candidates), -1),
        slots_(order_.size()),
        prune_(prune),
        may_start_(std::move(may_start)) {
    for (std::size_t k = 0; k < order_.size(); ++k) {
      position_[static_cast<std::size_t>(order_[k])] = static_cast<std::int64_t>(k);
    }
  }

  std::optional<SearchTask> Take() override {
    {
      std::lock_guard lock(mutex_);
      if (!ClosedLocked()) {
        ++in_flight_;
        SearchTask task;
        task.index = order_[static_cast<std::size_t>(next_++)];
        if (prune_) task.incumbent = incumbent_;
        return task;
      }
    }
    changed_.notify_all();  // the consumer may be waiting for a config nobody will take
    return std::nullopt;
  }
  // Hands out the next position to a config evaluated before (a resumed record, the seed) even
  // when nothing may start any more; false when `index` is not the config of that position.
  bool Prefill(std::int64_t index, ConfigEvaluation result) {
    {
      std::lock_guard lock(mutex_);
      if (next_ >= static_cast<std::int64_t>(order_.size()) ||
          order_[static_cast<std::size_t>(next_)] != index) {
        return false;
      }
      ++next_;
      ++in_flight_;
    }
    Done(index, std::move(result));
    return true;
  }
  bool Closed() override {
    std::lock_guard lock(mutex_);
    return ClosedLocked();
  }
  void Done(std::int64_t index, ConfigEvaluation result) override {
    Fill(index, [&](Slot& s) {
      // Only exact results count (a pruned model's score and a pruned common score are 0).
      auto& best = incumbent_.throughputs;
      best.resize(std::max(best.size(), result.models.size()), 0.0);
      for (std::size_t m = 0; m < result.models.size(); ++m) {
        best[m] = std::max(best[m], result.models[m].score);
      }
      incumbent_.score = std::max(incumbent_.score, result.score);
      s.result = std::move(result);
    });
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
  // Waits for the config at visiting position `k`. Empty slot: nobody will ever evaluate it
  // (budget, stop). Sets `abort` when the search was aborted.
  Slot Wait(std::int64_t k, std::optional<std::string>& abort) {
    std::unique_lock lock(mutex_);
    auto& slot = slots_[static_cast<std::size_t>(k)];
    changed_.wait(lock, [&] {
      if (slot.result || slot.failed || abort_) return true;
      // Not yet taken, nothing running that could take it, and nothing may start.
      if (next_ > k || in_flight_ > 0) return false;
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
      const std::int64_t k = position_.at(static_cast<std::size_t>(index));
      if (k < 0) throw Error("config " + std::to_string(index) + " was never handed out");
      set(slots_.at(static_cast<std::size_t>(k)));
      --in_flight_;
    }
    changed_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::int64_t> order_;     // position → config index
  std::vector<std::int64_t> position_;  // config index → position, −1 when not visited
  std::vector<Slot> slots_;             // by position
  bool prune_;
  Incumbent incumbent_;
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
  const bool prune = options.exhaustive && options.prune != PruneMode::kNone;
  const bool increasing = prune && options.prune == PruneMode::kPareto;
  // The visiting order: decreasing area (the list's order), or increasing for Pareto pruning;
  // a seed first.
  const std::int64_t seed = options.seed ? options.seed->first : -1;
  if (seed >= out.candidates || (seed >= 0 && (!options.exhaustive || increasing))) {
    throw Error("a seed config (" + std::to_string(seed) +
                ") needs an exhaustive search in decreasing area over a space that holds it");
  }
  std::vector<std::int64_t> order;
  if (seed >= 0) order.push_back(seed);
  for (std::int64_t k = 0; static_cast<std::int64_t>(order.size()) < planned; ++k) {
    if (k != seed) order.push_back(increasing ? out.candidates - 1 - k : k);
  }
  const bool reordered = increasing || seed > 0;  // buckets are counted after the loop

  SearchQueue queue(order, out.candidates, prune, [&] {
    if (stop && stop->load()) return false;
    return !(options.max_seconds > 0 && elapsed() > options.max_seconds);
  });
  auto worker = [&] {
    while (const auto task = queue.Take()) {
      try {
        const auto t0 = Clock::now();
        ConfigEvaluation result = evaluate(configs[static_cast<std::size_t>(task->index)],
                                           task->incumbent ? &*task->incumbent : nullptr);
        result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        queue.Done(task->index, std::move(result));
      } catch (...) {
        queue.Failed(task->index, options.local_name, Message(std::current_exception()));
      }
    }
  };
  // A resumed run's finished configs go through the queue first, as if just evaluated (a
  // checkpoint of another visiting order is refused); then the seed, unless they hold it.
  for (std::size_t k = 0; k < options.resumed.size(); ++k) {
    if (static_cast<std::int64_t>(k) >= planned) break;  // a smaller budget than the run's
    const auto& [index, result] = options.resumed[k];
    if (!queue.Prefill(index, result)) {
      throw Error("the checkpoint's configs are not in this search's visiting order (config " +
                  std::to_string(index) + " is not the next one)");
    }
  }
  if (options.seed && options.resumed.empty()) queue.Prefill(seed, options.seed->second);
  const std::size_t resumed = std::min<std::size_t>(options.resumed.size(), static_cast<std::size_t>(planned));
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
  for (std::int64_t k = 0; k < planned; ++k) {
    const std::int64_t i = order[static_cast<std::size_t>(k)];
    std::optional<std::string> abort;
    SearchQueue::Slot slot = queue.Wait(k, abort);
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
      out.stop_reason =
          (stop && stop->load()) ? StopReason::kInterrupted : StopReason::kMaxSeconds;
      break;
    }
    ExploredConfig e;
    e.rank = i;
    e.point = configs[static_cast<std::size_t>(i)];
    e.bucket = AreaBucket(e.point.area_um2, options.bucket_width_mm2);
    e.evaluation = std::move(*slot.result);
    if (options.on_finished && static_cast<std::size_t>(k) >= resumed) {
      try {
        options.on_finished(i, e.evaluation);
      } catch (const std::exception& x) {
        failure = x.what();
        break;
      }
    }
    if (e.evaluation.FullyPruned()) {
      ++out.pruned;
      ++(e.evaluation.pruned->tier == 1 ? out.pruned_by_compute_bound
                                        : out.pruned_by_placement_bound);
      if (e.evaluation.pruned->family > 0) ++out.pruned_by_family;
    } else if (e.evaluation.pruned) {
      ++out.partially_pruned;
    }
    best = std::max(best, e.evaluation.score);
    bucket_best = std::max(bucket_best, e.evaluation.score);
    out.explored.push_back(std::move(e));
    std::string note;
    if (prune) {
      note = fmt::sprintf("best %.6g samples/s, %lld pruned", best,
                    static_cast<long long>(out.pruned));
    } else {
      note = fmt::sprintf("best %.6g samples/s", best);
    }
    progress.Update(k + 1, note);

    if (reordered) continue;  // buckets are counted below, in decreasing-area order
    const bool bucket_ends =
        i + 1 == out.candidates ||
        AreaBucket(configs[static_cast<std::size_t>(i + 1)].area_um2, options.bucket_width_mm2) !=
            out.explored.back().bucket;
    if (bucket_ends) {
      out.bucket_best.push_back(bucket_best);
      bucket_best = 0;
      ++out.buckets_done;
      if (!options.exhaustive && HysteresisConverged(out.bucket_best, options.hysteresis_level)) {
        out.stop_reason = StopReason::kConverged;
        break;
      }
    }
  }
  if (reordered) {  // back to decreasing area; the buckets of the configs visited
    std::stable_sort(out.explored.begin(), out.explored.end(),
                     [](const ExploredConfig& a, const ExploredConfig& b) { return a.rank < b.rank; });
    for (std::size_t c = 0; c < out.explored.size(); ++c) {
      const auto& e = out.explored[c];
      if (c == 0 || e.bucket != out.explored[c - 1].bucket) {
        out.bucket_best.push_back(0);
        ++out.buckets_done;
      }
      out.bucket_best.back() = std::max(out.bucket_best.back(), e.evaluation.score);
    }
  }
  queue.Close();
  for (auto& t : pool) t.join();
  progress.End();
  if (!failure) failure = remote_failure;
  if (failure) throw Error(*failure);
  if (out.stop_reason == StopReason::kNone) {
    out.stop_reason = planned < out.candidates ? StopReason::kMaxConfigs : StopReason::kExhausted;
  }
  return out;
}

}  // namespace phaze
