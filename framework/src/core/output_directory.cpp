#include "phaze/core/output_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "phaze/core/error.hpp"
#include "phaze/core/files.hpp"

namespace phaze {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLockName = ".phaze.lock";

[[noreturn]] void Fail(const std::string& path, const std::string& why) {
  throw ConfigError("output directory '" + path + "': " + why +
                    " (set output.directory in the run config, or --output-dir)");
}

}  // namespace

OutputDirectory::OutputDirectory(std::string path) : path_(std::move(path)) {
  if (path_.empty()) Fail(path_, "empty path");
  std::error_code ec;
  fs::create_directories(path_, ec);
  if (ec) Fail(path_, "cannot create it: " + ec.message());
  if (!fs::is_directory(path_, ec)) Fail(path_, "exists and is not a directory");
  const std::string lock = (fs::path(path_) / kLockName).string();
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) Fail(path_, std::string("not writable: ") + std::strerror(errno));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder;
    std::ifstream(lock) >> holder;
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (err == EWOULDBLOCK) {
      Fail(path_, "in use by another phaze run" + (holder.empty() ? "" : " (pid " + holder + ")") +
                      "; wait for it to finish or write into another directory");
    }
    Fail(path_, std::string("cannot lock it: ") + std::strerror(err));
  }
  // The holder's pid, for the message another run prints.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 ||
      ::pwrite(lock_fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    Fail(path_, std::string("not writable: ") + std::strerror(err));
  }
}

OutputDirectory::~OutputDirectory() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

void OutputDirectory::WriteSet(const std::vector<std::pair<std::string, Writer>>& files,
                               const std::vector<std::string>& set) const {
  const fs::path dir(path_);
  const fs::path staging = dir / (".phaze-staging-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(staging, ec);
  fs::create_directory(staging, ec);
  if (ec) Fail(path_, "cannot create '" + staging.string() + "': " + ec.message());
  for (const auto& [name, write] : files) {
    std::string failed;
    try {
      failed = WriteFileStream((staging / name).string(), write);
    } catch (...) {
      fs::remove_all(staging, ec);
      throw;
    }
    if (!failed.empty()) {
      fs::remove_all(staging, ec);
      Fail(path_, "cannot write " + name + ": " + failed + "; the previous files are untouched");
    }
  }
  for (const auto& [name, write] : files) {
    fs::rename(staging / name, dir / name, ec);
    if (ec) {
      const std::string why = ec.message();
      fs::remove_all(staging, ec);
      Fail(path_, "cannot move " + name + " into place: " + why);
    }
  }
  fs::remove_all(staging, ec);
  for (const auto& name : set) {
    const bool written = std::any_of(files.begin(), files.end(),
                                     [&](const auto& f) { return f.first == name; });
    if (!written) fs::remove(dir / name, ec);  // an earlier run's; absent is fine
  }
}

}  // namespace phaze
