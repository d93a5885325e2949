// A worker rank's side of a distributed search: announces itself, evaluates the configs rank 0
// sends on `threads` threads, and returns once released. Only this (main) thread calls MPI; the
// evaluation threads exchange work with it through two queues.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "cluster_state.hpp"
#include "phaze/core/byte_stream.hpp"
#include "phaze/search/evaluation_codec.hpp"

namespace phaze {

void Cluster::Serve(const std::string& fingerprint, int threads, const IndexEvaluator& evaluate) {
  using Clock = std::chrono::steady_clock;
  threads = std::max(1, threads);
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<SearchTask> tasks;
  std::deque<std::pair<mpi::Tag, std::string>> answers;
  bool stopping = false;

  auto worker = [&] {
    while (true) {
      SearchTask task;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return stopping || !tasks.empty(); });
        if (stopping) return;
        task = std::move(tasks.front());
        tasks.pop_front();
      }
      ByteWriter w;
      w.Int(task.index);
      mpi::Tag tag = mpi::kResult;
      try {
        const auto t0 = Clock::now();
        ConfigEvaluation result =
            evaluate(task.index, task.incumbent ? &*task.incumbent : nullptr);
        result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        w.String(EncodeConfigEvaluation(result));
      } catch (const std::exception& e) {
        tag = mpi::kError;
        w.String(e.what());
      } catch (...) {
        tag = mpi::kError;
        w.String("unknown exception");
      }
      {
        std::lock_guard lock(mutex);
        answers.emplace_back(tag, w.Take());
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) pool.emplace_back(worker);

  ByteWriter ready;
  ready.Int(threads);
  ready.String(fingerprint);
  mpi::Send(0, mpi::kReady, ready.Bytes());
  while (true) {
    if (auto m = mpi::TryReceive()) {
      if (m->tag == mpi::kRelease) break;
      if (m->tag == mpi::kTask) {
        SearchTask task = DecodeSearchTask(m->bytes);
        {
          std::lock_guard lock(mutex);
          tasks.push_back(std::move(task));
        }
        cv.notify_all();
      }
      continue;
    }
    std::unique_lock lock(mutex);
    if (answers.empty()) {
      cv.wait_for(lock, std::chrono::milliseconds(1), [&] { return !answers.empty(); });
    }
    while (!answers.empty()) {
      auto [tag, bytes] = std::move(answers.front());
      answers.pop_front();
      lock.unlock();
      mpi::Send(0, tag, bytes);
      lock.lock();
    }
  }
  // Released: evaluations still running are abandoned (their results are no longer wanted).
  {
    std::lock_guard lock(mutex);
    stopping = true;
    tasks.clear();
  }
  cv.notify_all();
  for (auto& t : pool) t.join();
  mpi::Send(0, mpi::kBye);
  state_->served = true;
}

}  // namespace phaze
