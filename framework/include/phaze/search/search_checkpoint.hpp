// The checkpoint of a long search (`phaze search --resume DIR`): a journal in the output directory
// of every config the search has finished, in visiting order, so that a run killed by SIGKILL or a
// batch scheduler's time limit continues where it stopped and ends with the results of an
// uninterrupted run.
//
// File `search.checkpoint`: a header record (format version, the phaze build, the search's
// fingerprint — SearchContext::Fingerprint, which covers the models, the space and every setting
// that changes results — and the run config's path), then one record per finished config (its index
// in the config list and its ConfigEvaluation, evaluation_codec.hpp). A record is its length, an
// FNV-1a hash of its bytes and the bytes: one torn by a kill is detected and dropped with
// everything after it, so the journal is never read corrupt. Records are appended in batches, at
// most every `flush_seconds` (and at the end), then flushed to the disk (fsync): a kill loses at
// most that many seconds of work.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "phaze/search/arch_search.hpp"

namespace phaze {

class SearchCheckpoint {
 public:
  static constexpr const char* kFileName = "search.checkpoint";

  // A new journal at `path` (replacing any there) for the search `fingerprint` of the run config
  // `run_config_path`. Throws Error when it cannot be written.
  static SearchCheckpoint Create(const std::string& path, const std::string& fingerprint,
                                 const std::string& run_config_path, double flush_seconds);
  // The journal at `path`, to continue: its records — (index in the config list, evaluation), as
  // ArchSearchOptions::resumed takes them — are returned in `records` (torn ones
  // dropped, and the file cut back to the last whole one); new records are appended. Throws
  // ConfigError naming the file when there is none, it is not a checkpoint, or it was written by
  // another phaze build or for another search (`fingerprint`: the run config, a model or the
  // space changed).
  static SearchCheckpoint Resume(const std::string& path, const std::string& fingerprint,
                                 double flush_seconds,
                                 std::vector<std::pair<std::int64_t, ConfigEvaluation>>* records);
  // The run config a checkpoint was written for (its header), to resume without --config.
  static std::string RunConfigPath(const std::string& path);

  SearchCheckpoint(SearchCheckpoint&&) noexcept;
  SearchCheckpoint& operator=(SearchCheckpoint&&) noexcept;
  ~SearchCheckpoint();  // flushes

  // Appends a finished config: handed to the file once a flush is due or kWriteBytes are
  // pending (without a sync then: what the search keeps in memory stays small however fast
  // configs finish — pruned ones finish by thousands a second).
  void Add(std::int64_t index, const ConfigEvaluation& evaluation);
  // Writes what was added and syncs it to the disk. Throws Error when it cannot.
  void Flush();

  static constexpr std::size_t kWriteBytes = std::size_t{1} << 20;

 private:
  SearchCheckpoint(std::string path, std::FILE* file, double flush_seconds);
  void Write();  // pending_ to the file (no sync); throws Error when it cannot
  std::string path_;
  std::FILE* file_ = nullptr;
  double flush_seconds_ = 0;
  std::string pending_;
  std::chrono::steady_clock::time_point last_flush_;
};

}  // namespace phaze
