#include "phaze/estimate/estimate_cache.hpp"

#include <memory>

namespace phaze {

namespace {

void Mix(std::size_t& h, std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

std::size_t HashWork(const OpWork& op, Pass pass) {
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
  for (auto v : {op.bytes_read, op.bytes_written, op.weight_bytes, op.fp8_cast_elements,
                 op.fp8_scaling_bytes, static_cast<std::int64_t>(op.fp8),
                 static_cast<std::int64_t>(op.attention_kernel), op.extra_kernels}) {
    Mix(h, std::hash<std::int64_t>{}(v));
  }
  return h;
}

std::size_t HashArch(const ArchConfig& a) {
  std::size_t h = 0;
  for (auto v : {a.num_tc, a.num_vc, a.pe_x, a.pe_y, a.pe_vc, a.glb_bytes, a.l2_tc_bytes,
                 a.l2_vc_bytes, a.hbm_bytes, a.word_bytes}) {
    Mix(h, std::hash<std::int64_t>{}(v));
  }
  for (double v : {a.glb_bandwidth_words_per_cycle, a.hbm_bandwidth_bytes_per_s, a.frequency_hz,
                   a.fp8_tensor_ratio, a.tdp_w, a.power_limit_w, a.die_area_mm2}) {
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
         a.weight_bytes == b.weight_bytes && a.fp8 == b.fp8 &&
         a.fp8_cast_elements == b.fp8_cast_elements && a.fp8_scaling_bytes == b.fp8_scaling_bytes &&
         a.attention_kernel == b.attention_kernel && a.extra_kernels == b.extra_kernels;
}

bool SameArch(const ArchConfig& a, const ArchConfig& b) {
  return a.name == b.name && a.num_tc == b.num_tc && a.num_vc == b.num_vc && a.pe_x == b.pe_x &&
         a.pe_y == b.pe_y && a.pe_vc == b.pe_vc && a.glb_bytes == b.glb_bytes &&
         a.glb_bandwidth_words_per_cycle == b.glb_bandwidth_words_per_cycle &&
         a.l2_tc_bytes == b.l2_tc_bytes && a.l2_vc_bytes == b.l2_vc_bytes &&
         a.hbm_bytes == b.hbm_bytes && a.hbm_bandwidth_bytes_per_s == b.hbm_bandwidth_bytes_per_s &&
         a.frequency_hz == b.frequency_hz && a.word_bytes == b.word_bytes &&
         a.fp8_tensor_ratio == b.fp8_tensor_ratio && a.tdp_w == b.tdp_w &&
         a.power_limit_w == b.power_limit_w && a.die_area_mm2 == b.die_area_mm2 &&
         a.calibration == b.calibration && a.energy == b.energy;
}

}  // namespace

OpEstimate CachedEstimator::Estimate(const OpWork& op, const ArchConfig& arch, Pass pass) const {
  const std::size_t arch_hash = HashArch(arch);
  const std::size_t work_hash = HashWork(op, pass);
  auto find_arch = [&]() -> int {
    if (auto it = arch_ids_.find(arch_hash); it != arch_ids_.end()) {
      for (int id : it->second) {
        if (SameArch(*archs_[static_cast<std::size_t>(id)], arch)) return id;
      }
    }
    return -1;
  };
  auto key = [&](int id) {
    std::size_t h = work_hash;
    Mix(h, static_cast<std::size_t>(id));
    return h;
  };
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const int id = find_arch(); id >= 0) {
      if (auto it = cache_.find(key(id)); it != cache_.end()) {
        for (const auto& e : it->second) {
          if (e.arch == id && e.pass == pass && SameWork(e.op, op)) {
            ++hits_;
            return e.estimate;
          }
        }
      }
    }
  }
  OpEstimate e = inner_->Estimate(op, arch, pass);  // outside the lock: estimators are pure
  std::lock_guard<std::mutex> lock(mutex_);
  ++misses_;
  int id = find_arch();
  if (id < 0) {
    id = static_cast<int>(archs_.size());
    archs_.push_back(std::make_unique<const ArchConfig>(arch));
    arch_ids_[arch_hash].push_back(id);
  }
  OpWork work = op;  // without its name, which no estimate depends on
  work.name.clear();
  work.name.shrink_to_fit();
  cache_[key(id)].push_back({std::move(work), id, pass, e});
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
