// Internal: the state behind phaze::Cluster, and the MPI transport (messages to and from rank 0,
// received by polling so that an idle rank sleeps instead of spinning in MPI_Recv). Only the
// MPI build (PHAZE_WITH_MPI) compiles the transport.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "phaze/cluster/cluster.hpp"

namespace phaze {

struct Cluster::State {
  int rank = 0;
  int size = 1;
  bool mpi = false;  // MPI_Init was called here
  std::vector<std::string> hosts;  // by rank
  bool finished = false;
  // A worker rank:
  bool served = false;  // Serve ran until released
  std::string failure;
  // Rank 0, by rank (index 0 unused):
  std::vector<char> released, bye;
  std::vector<std::string> unread;  // GONE messages nobody read
};

namespace mpi {

enum Tag : int { kReady = 1, kGone, kTask, kResult, kError, kRelease, kBye };

struct Message {
  int source = -1;
  int tag = 0;
  std::string bytes;
};

void Send(int dest, Tag tag, const std::string& bytes = {});
// A waiting message (from any rank), if any.
std::optional<Message> TryReceive();
// Waits for a message, sleeping `poll_ms` between checks.
Message Receive(int poll_ms = 1);

// Rank 0: sends RELEASE to every worker not yet released.
void ReleaseWorkers(Cluster::State& state);

}  // namespace mpi
}  // namespace phaze
