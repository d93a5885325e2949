#include "phaze/schedule/schedule_cache.hpp"

#include <cstring>
#include <functional>
#include <memory>

namespace phaze {
namespace {

template <typename T>
void Append(std::string& key, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  key.append(bytes, sizeof(T));
}

std::int64_t ResultBytes(const ScheduleResult& r) {
  std::int64_t bytes = static_cast<std::int64_t>(sizeof(ScheduleResult) + r.stats.detail.size());
  for (const auto& op : r.ops) {
    bytes += static_cast<std::int64_t>(sizeof(ScheduledOp) +
                                       sizeof(int) * (op.tensor_cores.size() + op.vector_cores.size()));
  }
  return bytes;
}

double Rate(std::int64_t hits, std::int64_t misses) {
  return hits + misses > 0 ? static_cast<double>(hits) / static_cast<double>(hits + misses) : 0.0;
}

}  // namespace

double ScheduleCacheStats::HitRate() const { return Rate(hits, misses); }
double ScheduleCacheStats::BoundHitRate() const { return Rate(bound_hits, bound_misses); }

ScheduleCache::ScheduleCache(std::int64_t max_bytes) : max_bytes_(max_bytes) {}

std::string ScheduleCache::Key(const ScheduleProblem& p) {
  std::string key;
  key.reserve(16 + p.ops.size() * 17 + p.edges.size() * 8);
  Append(key, static_cast<std::int32_t>(p.num_tc));
  Append(key, static_cast<std::int32_t>(p.num_vc));
  Append(key, static_cast<std::int32_t>(p.ops.size()));
  for (const auto& op : p.ops) {
    Append(key, static_cast<char>(op.cls));
    Append(key, op.single_core_s);
    Append(key, op.UsesCores() ? op.all_cores_s : 0.0);  // ignored for link ops
  }
  for (const auto& [from, to] : p.edges) {
    Append(key, static_cast<std::int32_t>(from));
    Append(key, static_cast<std::int32_t>(to));
  }
  return key;
}

ScheduleCache::Digest ScheduleCache::DigestOf(const std::string& key) {
  std::uint64_t fnv = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : key) {
    fnv ^= c;
    fnv *= 0x100000001b3ULL;
  }
  return {fnv, static_cast<std::uint64_t>(std::hash<std::string>{}(key))};
}

ScheduleCache::Entry* ScheduleCache::Lookup(const Digest& key) {
  if (auto it = young_.find(key); it != young_.end()) return &it->second;
  auto it = old_.find(key);
  if (it == old_.end()) return nullptr;
  Entry entry = std::move(it->second);
  old_bytes_ -= entry.bytes;
  old_.erase(it);
  Put(key, std::move(entry));
  return &young_.at(key);
}

void ScheduleCache::Put(const Digest& key, Entry entry) {
  entry.bytes = static_cast<std::int64_t>(sizeof(Digest) + sizeof(Entry) + 64) +
                (entry.result ? ResultBytes(*entry.result) : 0);
  if (young_bytes_ + entry.bytes > max_bytes_ / 2 && !young_.empty()) {
    stats_.evictions += static_cast<std::int64_t>(old_.size());
    old_ = std::move(young_);
    old_bytes_ = young_bytes_;
    young_ = Map();
    young_bytes_ = 0;
  }
  young_bytes_ += entry.bytes;
  auto [it, inserted] = young_.try_emplace(key);
  if (!inserted) young_bytes_ -= it->second.bytes;
  it->second = std::move(entry);
}

std::optional<ScheduleResult> ScheduleCache::Find(const std::string& key) {
  std::lock_guard lock(mutex_);
  Entry* e = Lookup(DigestOf(key));
  if (e && e->result) {
    ++stats_.hits;
    return *e->result;
  }
  ++stats_.misses;
  return std::nullopt;
}

void ScheduleCache::Insert(const std::string& key, const ScheduleResult& result) {
  std::lock_guard lock(mutex_);
  Entry entry;
  entry.result = std::make_unique<ScheduleResult>(result);
  entry.bound = result.makespan_s;
  Put(DigestOf(key), std::move(entry));
}

std::optional<double> ScheduleCache::FindBound(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (Entry* e = Lookup(DigestOf(key))) {
    ++stats_.bound_hits;
    return e->bound;
  }
  ++stats_.bound_misses;
  return std::nullopt;
}

void ScheduleCache::InsertBound(const std::string& key, double bound) {
  std::lock_guard lock(mutex_);
  const Digest d = DigestOf(key);
  if (Entry* e = Lookup(d)) {
    if (!e->result) e->bound = std::max(e->bound, bound);
    return;
  }
  Entry entry;
  entry.bound = bound;
  Put(d, std::move(entry));
}

ScheduleCacheStats ScheduleCache::Stats() const {
  std::lock_guard lock(mutex_);
  ScheduleCacheStats s = stats_;
  s.entries = static_cast<std::int64_t>(young_.size() + old_.size());
  s.bytes = young_bytes_ + old_bytes_;
  return s;
}

}  // namespace phaze
