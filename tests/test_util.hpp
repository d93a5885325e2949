// Helpers shared by the test programs: temporary directories and files, running a shell command
// with its stdout, stderr and exit code captured, capturing this process's own fd 1/2, and the
// message of the phaze::Error a call throws, and a command line split at its spaces.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "phaze/core/error.hpp"

namespace phaze::testing {

// Whether this test program runs under AddressSanitizer (CI's sanitized job, PHAZE_SANITIZE=ON),
// where a schedule solve or a search is 20-30 times slower than in the plain build: the exhaustive
// cross-checks sample fewer cases there (the same code paths, fewer repetitions), and the plain
// job keeps checking them all.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// "a b c" → {"a", "b", "c"}: an argument list written as one line.
inline std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t space = std::min(text.find(' ', at), text.size());
    out.push_back(text.substr(at, space - at));
    at = space + 1;
  }
  return out;
}

// What f throws as a phaze::Error, or "<no error>".
inline std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "phaze-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `command` through /bin/sh with stdin from /dev/null.
inline CommandResult Run(const std::string& command) {
  TempDir dir;
  auto out = dir / "stdout", err = dir / "stderr";
  std::string full = "(" + command + ") < /dev/null > '" + out.string() + "' 2> '" + err.string() + "'";
  int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

// Captures everything written to file descriptors 1 and 2 (C, C++ and native code alike) while
// alive; Text() returns it after Stop().
class StdioCapture {
 public:
  StdioCapture() {
    std::fflush(stdout);
    std::fflush(stderr);
    file_ = dir_ / "captured";
    int fd = ::open(file_.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
    saved_out_ = ::dup(1);
    saved_err_ = ::dup(2);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StdioCapture() { Stop(); }
  void Stop() {
    if (saved_out_ < 0) return;
    std::fflush(stdout);
    std::fflush(stderr);
    ::dup2(saved_out_, 1);
    ::dup2(saved_err_, 2);
    ::close(saved_out_);
    ::close(saved_err_);
    saved_out_ = saved_err_ = -1;
  }
  std::string Text() const { return Slurp(file_); }

 private:
  TempDir dir_;
  std::filesystem::path file_;
  int saved_out_ = -1, saved_err_ = -1;
};

}  // namespace phaze::testing
