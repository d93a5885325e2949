// Independent work items on a few threads: the search's family bounds, the baselines and the
// robustness study's perturbations each hand out their items this way.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace phaze {

// Runs fn(i) for every i in [0, count) on up to `threads` threads (the caller's among them), each
// index once, handed out in increasing order. No index is handed out once `stop` is set, nor after
// fn has thrown: the first exception is rethrown on the caller's thread once every thread is done.
inline void ForEachIndex(std::size_t count, int threads, const std::function<void(std::size_t)>& fn,
                         const std::atomic<bool>* stop = nullptr) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (std::size_t i;
         !failed.load() && !(stop && stop->load()) && (i = next.fetch_add(1)) < count;) {
      try {
        fn(i);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  const std::size_t helpers =
      std::min<std::size_t>(count, static_cast<std::size_t>(std::max(1, threads)));
  for (std::size_t t = 1; t < helpers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace phaze
