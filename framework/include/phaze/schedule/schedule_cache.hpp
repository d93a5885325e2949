// The run-wide memo of the per-layer scheduler (DESIGN §5): segment schedules keyed by content —
// each op's class and two latencies, the edges, the core counts as the segment split clamps them —
// so that every config, model and thread of a search shares what one of them solved. Names are
// not part of the key: they never change a schedule. Also keeps lower bounds of segments that were
// only bounded (the search's bound pass, search/config_evaluator.hpp).
//
// Bounded in memory: entries live in two generations; when the young one holds half the budget,
// the old one is dropped and the young one becomes old (a hit in the old generation moves the
// entry back to the young one), so what is used keeps its place and memory stays under `max_bytes`
// however many configs a search visits. Thread-safe. Deterministic: a schedule solved twice is the
// same schedule, so whether a lookup hits never changes a result, only the time it takes.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "phaze/schedule/schedule_problem.hpp"

namespace phaze {

struct ScheduleCacheStats {
  std::int64_t hits = 0;          // schedules found
  std::int64_t misses = 0;        // schedules solved
  std::int64_t bound_hits = 0;    // lower bounds found (or answered by a cached schedule)
  std::int64_t bound_misses = 0;  // lower bounds computed
  std::int64_t entries = 0;
  std::int64_t bytes = 0;         // estimated
  std::int64_t evictions = 0;     // entries dropped with an old generation
  double HitRate() const;         // hits / (hits + misses); 0 when nothing was asked
  double BoundHitRate() const;
};

class ScheduleCache {
 public:
  explicit ScheduleCache(std::int64_t max_bytes = std::int64_t{256} << 20);

  // The content key of a problem (names ignored). The memo files an entry under a 128-bit digest
  // of it (two independent 64-bit hashes, FNV-1a and the standard library's), not the key itself:
  // a layer pass's key is hundreds of bytes and a search meets hundreds of thousands of them.
  // Two keys share an entry only if both hashes collide at once (odds of order n²/2¹²⁹ for n
  // keys: about 10⁻²⁷ for the million of a long search).
  static std::string Key(const ScheduleProblem& problem);

  std::optional<ScheduleResult> Find(const std::string& key);
  void Insert(const std::string& key, const ScheduleResult& result);
  // A lower bound on the segment's makespan: its schedule's makespan when it was solved (what the
  // scheduler would return, so the tightest valid bound), else a bound stored by InsertBound.
  std::optional<double> FindBound(const std::string& key);
  void InsertBound(const std::string& key, double bound);

  ScheduleCacheStats Stats() const;
  std::int64_t MaxBytes() const { return max_bytes_; }

 private:
  struct Digest {
    std::uint64_t a = 0, b = 0;
    bool operator==(const Digest&) const = default;
  };
  struct DigestHash {
    std::size_t operator()(const Digest& d) const { return static_cast<std::size_t>(d.a); }
  };
  static Digest DigestOf(const std::string& key);
  struct Entry {
    std::unique_ptr<ScheduleResult> result;  // null: a bound only (most entries)
    double bound = 0;
    std::int64_t bytes = 0;
  };
  using Map = std::unordered_map<Digest, Entry, DigestHash>;
  Entry* Lookup(const Digest& key);  // mutex held; moves an old entry to the young map
  void Put(const Digest& key, Entry entry);  // mutex held

  std::int64_t max_bytes_;
  mutable std::mutex mutex_;
  Map young_, old_;
  std::int64_t young_bytes_ = 0, old_bytes_ = 0;
  ScheduleCacheStats stats_;
};

}  // namespace phaze
