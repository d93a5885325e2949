// Rank 0's side of a distributed search: hands config indices to the worker ranks as they have
// free threads (dynamic distribution, so fast and slow configs balance) and reports their results
// to the search's queue.
#include <chrono>
#include <map>
#include <thread>

#include "cluster_state.hpp"
#include "phaze/core/byte_stream.hpp"
#include "phaze/core/error.hpp"
#include "phaze/search/evaluation_codec.hpp"

namespace phaze {
namespace {

class MpiCoordinator final : public RemoteEvaluator {
 public:
  MpiCoordinator(Cluster& cluster, Cluster::State& state, std::string fingerprint)
      : cluster_(cluster), state_(state), fingerprint_(std::move(fingerprint)) {}

  void Serve(WorkSource& work) override {
    const auto n = static_cast<std::size_t>(state_.size);
    std::vector<std::int64_t> capacity(n, 0), busy(n, 0);
    std::map<std::int64_t, int> outstanding;  // config index → rank
    // Every worker says READY or GONE once. The run ends only after all have spoken, so a rank
    // that could not start fails the run even when the others finished the search without it.
    std::size_t silent = n - 1;
    bool closed = false;
    while (true) {
      // Hand out work to every rank with a free thread.
      for (std::size_t r = 1; r < n && !closed; ++r) {
        while (busy[r] < capacity[r]) {
          const auto task = work.Take();
          if (!task) {
            closed = true;
            break;
          }
          mpi::Send(static_cast<int>(r), mpi::kTask, EncodeSearchTask(*task));
          ++busy[r];
          outstanding[task->index] = static_cast<int>(r);
        }
      }
      if (closed && outstanding.empty() && silent == 0) break;
      // While nothing is out, new work can only come from a rank getting ready: wait for it, but
      // notice when the search ends without needing the workers.
      const auto message = outstanding.empty() && !closed ? Poll(work, closed) : mpi::Receive();
      if (!message) continue;
      const int r = message->source;
      const std::string where = cluster_.Where(r);
      ByteReader reader(message->bytes);
      switch (message->tag) {
        case mpi::kReady: {
          capacity[static_cast<std::size_t>(r)] = reader.Int();
          --silent;
          const std::string theirs = reader.String();
          if (theirs != fingerprint_) {
            throw Error(where + " does not see the same search as rank 0 (" + theirs + " vs " +
                        fingerprint_ +
                        "): are the run config, models and space files the same on every node?");
          }
          break;
        }
        case mpi::kResult:
        case mpi::kError: {
          const std::int64_t index = reader.Int();
          const auto it = outstanding.find(index);
          if (it == outstanding.end() || it->second != r) {
            throw Error(where + " answered config " + std::to_string(index) +
                        ", which it was not given");
          }
          outstanding.erase(it);
          --busy[static_cast<std::size_t>(r)];
          if (message->tag == mpi::kResult) {
            ConfigEvaluation result = DecodeConfigEvaluation(reader.String());
            work.Done(index, std::move(result));
          } else {
            work.Failed(index, where, reader.String());
          }
          break;
        }
        case mpi::kGone: {
          const std::string why = reader.String();
          throw Error(where + " could not take part in the search: " +
                      (why.empty() ? std::string("it ran no search") : why));
        }
        default:
          throw Error(where + " sent an unexpected message (tag " +
                      std::to_string(message->tag) + ")");
      }
    }
    mpi::ReleaseWorkers(state_);  // before the baselines, which rank 0 evaluates alone
  }

 private:
  // A message, or none once the queue has nothing more to hand out.
  static std::optional<mpi::Message> Poll(WorkSource& work, bool& closed) {
    while (true) {
      if (auto m = mpi::TryReceive()) return m;
      if (work.Closed()) {
        closed = true;
        return std::nullopt;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  Cluster& cluster_;
  Cluster::State& state_;
  std::string fingerprint_;
};

}  // namespace

std::unique_ptr<RemoteEvaluator> Cluster::Coordinator(const std::string& fingerprint) {
  return std::make_unique<MpiCoordinator>(*this, *state_, fingerprint);
}

}  // namespace phaze
