// The directory a search writes its results into, claimed by one run from before the search until
// its files are written: created and checked writable up front (an unwritable directory fails in
// a second, not after hours of search), locked so that a second run into the same directory is
// refused instead of mixing its files with this run's, and written as one set.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace phaze {

class OutputDirectory {
 public:
  // Creates `path` if needed and takes its lock (flock on PATH/.phaze.lock, released when this
  // object dies or the process ends, even by a crash). Throws ConfigError naming the directory
  // when it cannot be created, is not a directory, is not writable, or another run holds it.
  explicit OutputDirectory(std::string path);
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  const std::string& Path() const { return path_; }

  // Writes `files` (name, and what writes its text) as one set. Every file is first written in
  // full to a staging directory inside this one, one file at a time (a file's text need never be
  // whole in memory, nor two files' at once), and only then moved into place (a rename each), so
  // a failure while writing (disk full, a writer that throws) leaves the previous set untouched;
  // then the names of `set` this run did not write (an earlier run's schedule.svg, say) are
  // removed, so the directory never holds one run's results.json next to another run's report.md.
  using Writer = std::function<void(std::ostream&)>;
  void WriteSet(const std::vector<std::pair<std::string, Writer>>& files,
                const std::vector<std::string>& set) const;

 private:
  std::string path_;
  int lock_fd_ = -1;
};

}  // namespace phaze
