// A memoising decorator for any estimator: results keyed by (everything in the OpWork but its
// name, every architecture field, pass), so the 48 identical blocks of a model — and every
// micro-batch, HBM size and recompute setting that reuses a shape — cost one estimate. Keys are
// hashed without building strings and compared in full. Thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "phaze/estimate/estimator.hpp"

namespace phaze {

class CachedEstimator : public Estimator {
 public:
  explicit CachedEstimator(std::shared_ptr<const Estimator> inner) : inner_(std::move(inner)) {}

  OpEstimate Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const override;
  // The inner estimator's, not memoised (a bound asks each once; an estimator with a costly one
  // keeps its own memo).
  OpEstimate EstimateLowerBound(const OpWork& op, const ArchConfig& arch,
                                Pass pass) const override {
    return inner_->EstimateLowerBound(op, arch, pass);
  }

  std::int64_t Hits() const;
  std::int64_t Misses() const;

 private:
  struct Entry {
    OpWork op;
    int arch;  // into archs_
    Pass pass;
    OpEstimate estimate;
  };
  std::shared_ptr<const Estimator> inner_;
  mutable std::mutex mutex_;
  // The distinct architectures met, each kept once (an evaluation meets one, a family's bound a
  // few dozen; an entry holding a copy of its ArchConfig made copying and freeing them most of
  // the cache's cost).
  mutable std::vector<std::unique_ptr<const ArchConfig>> archs_;
  mutable std::unordered_map<std::size_t, std::vector<int>> arch_ids_;  // by hash
  mutable std::unordered_map<std::size_t, std::vector<Entry>> cache_;  // by (op, arch id, pass)
  mutable std::int64_t hits_ = 0;
  mutable std::int64_t misses_ = 0;
};

}  // namespace phaze
