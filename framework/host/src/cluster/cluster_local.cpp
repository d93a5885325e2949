// phaze::Cluster without MPI (PHAZE_WITH_MPI off): always one process. Started by mpirun with
// several processes, it refuses to run rather than let each process run the whole search.
#include <cstdlib>

#include "cluster_state.hpp"
#include "phaze/core/error.hpp"

namespace phaze {

bool Cluster::BuiltWithMpi() { return false; }

Cluster::Cluster() : state_(std::make_unique<State>()) {
  state_->hosts = {"this host"};
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* n = std::getenv(v);
    if (n && std::atoi(n) > 1) {
      throw Error(std::string("started by an MPI launcher with ") + n +
                  " processes, but this phaze was built without MPI (Open MPI was not found or "
                  "PHAZE_WITH_MPI=OFF): every process would run the whole search on its own. "
                  "Install libopenmpi-dev and rebuild, or run phaze without mpirun.");
    }
  }
}

Cluster::~Cluster() = default;

int Cluster::Rank() const { return 0; }
int Cluster::Size() const { return 1; }
std::string Cluster::Where(int rank) const { return "rank " + std::to_string(rank); }
void Cluster::SetFailure(const std::string& message) { state_->failure = message; }
std::vector<std::string> Cluster::Finish() { return {}; }

std::unique_ptr<RemoteEvaluator> Cluster::Coordinator(const std::string&) {
  throw InvalidArgumentError("Cluster::Coordinator: a single-process run has no workers");
}

void Cluster::Serve(const std::string&, int, const IndexEvaluator&) {
  throw InvalidArgumentError("Cluster::Serve: a single-process run has no rank 0 to serve");
}

}  // namespace phaze
