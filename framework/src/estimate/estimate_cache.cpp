#include "phaze/estimate/estimate_cache.hpp"

#include "phaze/core/json.hpp"

namespace phaze {

std::string ArchKey(const ArchConfig& a) {
  return std::to_string(a.num_tc) + "," + std::to_string(a.num_vc) + "," + std::to_string(a.pe_x) +
         "," + std::to_string(a.pe_y) + "," + std::to_string(a.pe_vc) + "," +
         std::to_string(a.glb_bytes) + "," + FormatDouble(a.glb_bandwidth_words_per_cycle) + "," +
         std::to_string(a.l2_tc_bytes) + "," + std::to_string(a.l2_vc_bytes) + "," +
         std::to_string(a.hbm_bytes) + "," + FormatDouble(a.hbm_bandwidth_bytes_per_s) + "," +
         FormatDouble(a.frequency_hz) + "," + std::to_string(a.word_bytes) + "," + a.name;
}

OpEstimate CachedEstimator::Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const {
  std::string key = op.Signature() + "@" + ArchKey(arch) + "@" + std::string(ToString(pass));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      ++hits_;
      return it->second;
    }
  }
  OpEstimate e = inner_->Estimate(op, arch, pass);  // outside the lock: estimators are pure
  std::lock_guard<std::mutex> lock(mutex_);
  ++misses_;
  cache_.emplace(std::move(key), e);
  return e;
}

std::int64_t CachedEstimator::Hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

std::int64_t CachedEstimator::Misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

}  // namespace phaze
