// The processes of one run (the MPI scale-out of `phaze search`). The host's main() builds one
// Cluster per process: single-process unless phaze was built with MPI (PHAZE_WITH_MPI) and started
// by mpirun with more than one process. In a distributed search, rank 0 runs the search driver and
// hands configs (by index into SearchContext::Configs) to the other ranks through Coordinator();
// every other rank builds the same SearchContext and calls Serve(). Only `search` is distributed:
// other commands run on rank 0 alone.
//
// Protocol (all messages to or from rank 0): a worker announces READY (its thread count and
// context fingerprint) or GONE (it could not serve, and why); rank 0 sends TASK(index), the worker
// answers RESULT(index, evaluation) or ERROR(index, message); at the end rank 0 sends RELEASE to
// every worker and each answers BYE. Rank 0 always releases every worker and every worker always
// waits to be released, whatever failed where, so no process is left waiting: a failure on any
// rank ends the run with an error naming the rank (and the config, if it was evaluating one).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "phaze/search/arch_search.hpp"

namespace phaze {

class Cluster {
 public:
  // Starts MPI when started by mpirun (Open MPI, or a PMI launcher such as srun). Throws Error
  // when started with several processes by a phaze built without MPI (each would run the whole
  // search on its own).
  Cluster();
  ~Cluster();  // Finish(), then MPI_Finalize
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  static bool BuiltWithMpi();
  int Rank() const;
  int Size() const;
  bool Distributed() const { return Size() > 1; }
  // "rank 2 (host node7)".
  std::string Where(int rank) const;

  // Rank 0: the other ranks as a RemoteEvaluator for RunArchSearch. A worker whose fingerprint
  // differs from `fingerprint` (another space or model on its node) stops the search. Workers
  // are released when Serve returns.
  std::unique_ptr<RemoteEvaluator> Coordinator(const std::string& fingerprint);
  // Other ranks: evaluates the configs rank 0 sends with `threads` threads, until released.
  using IndexEvaluator =
      std::function<ConfigEvaluation(std::int64_t index, const Incumbent* incumbent)>;
  void Serve(const std::string& fingerprint, int threads, const IndexEvaluator& evaluate);
  // Other ranks: why this rank could not serve; Finish() tells rank 0.
  void SetFailure(const std::string& message);
  // Ends the protocol (idempotent): rank 0 releases every worker and waits for each BYE; a
  // worker that did not serve reports GONE and waits to be released. Returns, on rank 0, what
  // workers reported that the search never read (a worker that failed after rank 0 finished).
  std::vector<std::string> Finish();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace phaze
