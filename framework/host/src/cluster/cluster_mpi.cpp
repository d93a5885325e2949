// phaze::Cluster on MPI (built with PHAZE_WITH_MPI): start-up, the transport, Finish.
#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "cluster_state.hpp"
#include "phaze/core/byte_stream.hpp"
#include "phaze/core/error.hpp"

namespace phaze {
namespace {

// Started by a launcher that sets up an MPI job (Open MPI's mpirun, or PMI/PMIx such as srun).
bool LaunchedByMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(v)) return true;
  }
  return false;
}

}  // namespace

namespace mpi {

void Send(int dest, Tag tag, const std::string& bytes) {
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

std::optional<Message> TryReceive() {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Message m;
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.bytes.resize(static_cast<std::size_t>(count));
  MPI_Recv(m.bytes.data(), count, MPI_BYTE, m.source, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return m;
}

Message Receive(int poll_ms) {
  while (true) {
    if (auto m = TryReceive()) return std::move(*m);
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
}

void ReleaseWorkers(Cluster::State& state) {
  for (int r = 1; r < state.size; ++r) {
    if (!state.released[static_cast<std::size_t>(r)]) {
      Send(r, kRelease);
      state.released[static_cast<std::size_t>(r)] = 1;
    }
  }
}

}  // namespace mpi

bool Cluster::BuiltWithMpi() { return true; }

Cluster::Cluster() : state_(std::make_unique<State>()) {
  state_->hosts = {"this host"};
  if (!LaunchedByMpi()) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
  state_->mpi = true;
  if (provided < MPI_THREAD_SERIALIZED) {
    // Rank 0 talks to the workers from a search thread, not only from main().
    throw Error("MPI provides thread level " + std::to_string(provided) +
                ", phaze needs MPI_THREAD_SERIALIZED");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &state_->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &state_->size);
  // Every rank's host name, for messages.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> all(static_cast<std::size_t>(MPI_MAX_PROCESSOR_NAME) *
                        static_cast<std::size_t>(state_->size));
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  state_->hosts.clear();
  for (int r = 0; r < state_->size; ++r) {
    state_->hosts.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  }
  state_->released.assign(static_cast<std::size_t>(state_->size), 0);
  state_->bye.assign(static_cast<std::size_t>(state_->size), 0);
}

Cluster::~Cluster() {
  if (!state_->mpi) return;
  Finish();
  MPI_Finalize();
}

int Cluster::Rank() const { return state_->rank; }
int Cluster::Size() const { return state_->size; }

std::string Cluster::Where(int rank) const {
  const auto r = static_cast<std::size_t>(rank);
  return "rank " + std::to_string(rank) +
         (r < state_->hosts.size() ? " (host " + state_->hosts[r] + ")" : "");
}

void Cluster::SetFailure(const std::string& message) { state_->failure = message; }

std::vector<std::string> Cluster::Finish() {
  State& s = *state_;
  if (s.finished || s.size < 2) return {};
  s.finished = true;
  if (s.rank == 0) {
    mpi::ReleaseWorkers(s);
    int waiting = 0;
    for (int r = 1; r < s.size; ++r) waiting += s.bye[static_cast<std::size_t>(r)] ? 0 : 1;
    while (waiting > 0) {  // results of abandoned evaluations and READYs are dropped
      const mpi::Message m = mpi::Receive();
      if (m.tag == mpi::kBye && !s.bye[static_cast<std::size_t>(m.source)]) {
        s.bye[static_cast<std::size_t>(m.source)] = 1;
        --waiting;
      } else if (m.tag == mpi::kGone) {
        ByteReader reader(m.bytes);
        const std::string why = reader.String();
        if (!why.empty()) s.unread.push_back(Where(m.source) + " did not take part: " + why);
      }
    }
    return s.unread;
  }
  if (!s.served) {
    ByteWriter w;
    w.String(s.failure);
    mpi::Send(0, mpi::kGone, w.Bytes());
    while (mpi::Receive().tag != mpi::kRelease) {
    }
    mpi::Send(0, mpi::kBye);
  }
  return {};
}

}  // namespace phaze
