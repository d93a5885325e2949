#include "phaze/search/search_checkpoint.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include <unistd.h>

#include "phaze/build_fingerprint.hpp"
#include "phaze/core/byte_stream.hpp"
#include "phaze/core/error.hpp"
#include "phaze/search/evaluation_codec.hpp"

namespace phaze {
namespace {

constexpr const char* kMagic = "phaze search checkpoint";
// 2: a breakdown's data_parallel_total_s; 3: a stage's step memory; 4: a choice's shard group
// and replicas (hybrid sharding); 5: a choice's expert_parallel; 6: its expert_tensor_parallel.
constexpr std::int64_t kFormat = 6;

std::uint64_t Fnv1a(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// A record: length, hash, bytes (little-endian 64-bit integers, as ByteWriter writes them).
std::string Frame(std::string_view payload) {
  ByteWriter w;
  w.Int(static_cast<std::int64_t>(payload.size()));
  w.Int(static_cast<std::int64_t>(Fnv1a(payload)));
  std::string out = w.Take();
  out.append(payload);
  return out;
}

// The whole records of `bytes` from `at`, each payload in order; `at` ends after the last whole
// one (a torn or corrupt record and what follows are not read).
std::vector<std::string_view> Unframe(std::string_view bytes, std::size_t& at) {
  std::vector<std::string_view> payloads;
  while (bytes.size() - at >= 16) {
    ByteReader r(bytes.substr(at, 16));
    const std::int64_t length = r.Int();
    const auto hash = static_cast<std::uint64_t>(r.Int());
    if (length < 0 || static_cast<std::size_t>(length) > bytes.size() - at - 16) break;
    const std::string_view payload = bytes.substr(at + 16, static_cast<std::size_t>(length));
    if (Fnv1a(payload) != hash) break;
    payloads.push_back(payload);
    at += 16 + payload.size();
  }
  return payloads;
}

std::string Header(const std::string& fingerprint, const std::string& run_config_path) {
  ByteWriter w;
  w.String(kMagic);
  w.Int(kFormat);
  w.String(kBuildFingerprint);
  w.String(fingerprint);
  w.String(run_config_path);
  return w.Take();
}

struct ParsedHeader {
  std::string build, fingerprint, run_config_path;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(path + ": no search checkpoint here (a search writes " +
                      SearchCheckpoint::kFileName + " into its output directory)");
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The header of the journal `bytes` (read from `path`); `at` ends after it.
ParsedHeader ReadHeader(const std::string& path, std::string_view bytes, std::size_t& at) {
  at = 0;
  std::size_t end = 0;
  const auto first = Unframe(bytes.substr(0, std::min<std::size_t>(bytes.size(), 1 << 20)), end);
  auto bad = [&](const std::string& why) { return ConfigError(path + ": " + why); };
  if (first.empty()) throw bad("not a phaze search checkpoint (no readable header)");
  try {
    ByteReader r(first.front());
    if (r.String() != kMagic) throw bad("not a phaze search checkpoint");
    if (const std::int64_t format = r.Int(); format != kFormat) {
      throw bad("checkpoint format " + std::to_string(format) + "; this phaze reads format " +
                std::to_string(kFormat));
    }
    ParsedHeader h;
    h.build = r.String();
    h.fingerprint = r.String();
    h.run_config_path = r.String();
    at = 16 + first.front().size();
    return h;
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw bad(std::string("not a phaze search checkpoint (") + e.what() + ")");
  }
}

}  // namespace

SearchCheckpoint::SearchCheckpoint(std::string path, std::FILE* file, double flush_seconds)
    : path_(std::move(path)),
      file_(file),
      flush_seconds_(flush_seconds),
      last_flush_(std::chrono::steady_clock::now()) {}

SearchCheckpoint::SearchCheckpoint(SearchCheckpoint&& o) noexcept
    : path_(std::move(o.path_)),
      file_(std::exchange(o.file_, nullptr)),
      flush_seconds_(o.flush_seconds_),
      pending_(std::move(o.pending_)),
      last_flush_(o.last_flush_) {}

SearchCheckpoint& SearchCheckpoint::operator=(SearchCheckpoint&& o) noexcept {
  if (this != &o) {
    if (file_) std::fclose(file_);
    path_ = std::move(o.path_);
    file_ = std::exchange(o.file_, nullptr);
    flush_seconds_ = o.flush_seconds_;
    pending_ = std::move(o.pending_);
    last_flush_ = o.last_flush_;
  }
  return *this;
}

SearchCheckpoint::~SearchCheckpoint() {
  if (!file_) return;
  try {
    Flush();
  } catch (...) {  // a destructor does not throw; the search reported its own outcome
  }
  std::fclose(file_);
}

SearchCheckpoint SearchCheckpoint::Create(const std::string& path, const std::string& fingerprint,
                                          const std::string& run_config_path,
                                          double flush_seconds) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(path + ": cannot write the search checkpoint: " + std::strerror(errno));
  SearchCheckpoint c(path, f, flush_seconds);
  c.pending_ = Frame(Header(fingerprint, run_config_path));
  c.Flush();
  return c;
}

std::string SearchCheckpoint::RunConfigPath(const std::string& path) {
  const std::string bytes = ReadAll(path);
  std::size_t at = 0;
  return ReadHeader(path, bytes, at).run_config_path;
}

SearchCheckpoint SearchCheckpoint::Resume(const std::string& path, const std::string& fingerprint,
                                          double flush_seconds,
                                          std::vector<std::pair<std::int64_t, ConfigEvaluation>>* records) {
  const std::string bytes = ReadAll(path);
  std::size_t at = 0;
  const ParsedHeader h = ReadHeader(path, bytes, at);
  if (h.build != kBuildFingerprint) {
    throw ConfigError(path + ": written by phaze build " + h.build + "; this is build " +
                      kBuildFingerprint + " (resume with the build that started the search)");
  }
  if (h.fingerprint != fingerprint) {
    throw ConfigError(path + ": written for another search (" + h.fingerprint + "; this one is " +
                      fingerprint + "): the run config, a model or the space changed since");
  }
  records->clear();
  for (std::string_view payload : Unframe(bytes, at)) {
    ByteReader r(payload);
    const std::int64_t index = r.Int();
    records->emplace_back(index, DecodeConfigEvaluation(r.String()));
  }
  // Cut a torn tail off before appending.
  if (at < bytes.size() && ::truncate(path.c_str(), static_cast<off_t>(at)) != 0) {
    throw Error(path + ": cannot cut the torn last record: " + std::strerror(errno));
  }
  std::FILE* f = std::fopen(path.c_str(), "ab");
  if (!f) throw Error(path + ": cannot append to the search checkpoint: " + std::strerror(errno));
  return SearchCheckpoint(path, f, flush_seconds);
}

void SearchCheckpoint::Add(std::int64_t index, const ConfigEvaluation& evaluation) {
  ByteWriter w;
  w.Int(index);
  w.String(EncodeConfigEvaluation(evaluation));
  pending_ += Frame(w.Bytes());
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_flush_).count() >= flush_seconds_) {
    Flush();
  } else if (pending_.size() >= kWriteBytes) {
    Write();
  }
}

void SearchCheckpoint::Write() {
  if (pending_.empty() || !file_) return;
  if (std::fwrite(pending_.data(), 1, pending_.size(), file_) != pending_.size() ||
      std::fflush(file_) != 0) {
    throw Error(path_ + ": cannot write the search checkpoint: " + std::strerror(errno));
  }
  pending_.clear();
}

void SearchCheckpoint::Flush() {
  last_flush_ = std::chrono::steady_clock::now();
  Write();
  if (file_ && ::fsync(::fileno(file_)) != 0) {
    throw Error(path_ + ": cannot write the search checkpoint: " + std::strerror(errno));
  }
}

}  // namespace phaze
