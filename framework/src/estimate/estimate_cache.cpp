#include "phaze/estimate/estimate_cache.hpp"

namespace phaze {

namespace {

void Mix(std::size_t& h, std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

std::size_t Hash(const OpWork& op, const ArchConfig& a, Pass pass) {
  std::size_t h = static_cast<std::size_t>(op.kind) * 31 + static_cast<std::size_t>(pass);
  if (op.gemm) {
    for (auto v : {op.gemm->batch, op.gemm->m, op.gemm->n, op.gemm->k})
      Mix(h, std::hash<std::int64_t>{}(v));
  }
  for (const auto& w : op.vector) {
    Mix(h, std::hash<std::string>{}(w.function));
    Mix(h, std::hash<std::int64_t>{}(w.elements));
    Mix(h, std::hash<std::int64_t>{}(w.row_elements));
  }
  for (auto v :
       {op.bytes_read, op.bytes_written, op.weight_bytes, a.num_tc, a.num_vc, a.pe_x, a.pe_y,
        a.pe_vc, a.glb_bytes, a.l2_tc_bytes, a.l2_vc_bytes, a.hbm_bytes, a.word_bytes}) {
    Mix(h, std::hash<std::int64_t>{}(v));
  }
  for (double v : {a.glb_bandwidth_words_per_cycle, a.hbm_bandwidth_bytes_per_s, a.frequency_hz}) {
    Mix(h, std::hash<double>{}(v));
  }
  for (const auto* m : {&a.calibration, &a.energy}) {
    for (const auto& [k, v] : *m) {
      Mix(h, std::hash<std::string>{}(k));
      Mix(h, std::hash<double>{}(v));
    }
  }
  return h;
}

bool SameWork(const OpWork& a, const OpWork& b) {
  return a.kind == b.kind && a.gemm == b.gemm && a.vector == b.vector &&
         a.bytes_read == b.bytes_read && a.bytes_written == b.bytes_written &&
         a.weight_bytes == b.weight_bytes;
}

bool SameArch(const ArchConfig& a, const ArchConfig& b) {
  return a.name == b.name && a.num_tc == b.num_tc && a.num_vc == b.num_vc && a.pe_x == b.pe_x &&
         a.pe_y == b.pe_y && a.pe_vc == b.pe_vc && a.glb_bytes == b.glb_bytes &&
         a.glb_bandwidth_words_per_cycle == b.glb_bandwidth_words_per_cycle &&
         a.l2_tc_bytes == b.l2_tc_bytes && a.l2_vc_bytes == b.l2_vc_bytes &&
         a.hbm_bytes == b.hbm_bytes && a.hbm_bandwidth_bytes_per_s == b.hbm_bandwidth_bytes_per_s &&
         a.frequency_hz == b.frequency_hz && a.word_bytes == b.word_bytes &&
         a.calibration == b.calibration && a.energy == b.energy;
}

}  // namespace

OpEstimate CachedEstimator::Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const {
  const std::size_t key = Hash(op, arch, pass);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      for (const auto& e : it->second) {
        if (e.pass == pass && SameWork(e.op, op) && SameArch(e.arch, arch)) {
          ++hits_;
          return e.estimate;
        }
      }
    }
  }
  OpEstimate e = inner_->Estimate(op, arch, pass);  // outside the lock: estimators are pure
  std::lock_guard<std::mutex> lock(mutex_);
  ++misses_;
  cache_[key].push_back({op, arch, pass, e});
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
