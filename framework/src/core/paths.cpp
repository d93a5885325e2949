#include "phaze/core/paths.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdlib>

namespace phaze {

namespace fs = std::filesystem;

namespace {

fs::path ExecutableDirectory() {
  std::error_code ec;
  const auto p = boost::dll::program_location(ec);
  return ec ? fs::path() : fs::path(p.parent_path().string());
}

// The directory of libphaze_framework itself (this code's module).
fs::path LibraryDirectory() {
  std::error_code ec;
  const auto p = boost::dll::this_line_location(ec);
  return ec ? fs::path() : fs::path(p.parent_path().string());
}

}  // namespace

fs::path ShareDirectory() {
  if (const char* env = std::getenv("PHAZE_SHARE_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  for (const fs::path& dir : {ExecutableDirectory() / ".." / "share",
                              LibraryDirectory() / PHAZE_DATA_FROM_LIBDIR}) {
    if (fs::is_directory(dir / "arch", ec)) return dir.lexically_normal();
  }
  return PHAZE_DEFAULT_SHARE_DIR;
}

fs::path WorkloadsDirectory() {
  const fs::path share = ShareDirectory();
  std::error_code ec;
  if (fs::is_directory(share / "workloads", ec)) return share / "workloads";
  return (share / ".." / "workloads").lexically_normal();
}

fs::path BundledPluginDirectory() {
  const fs::path beside = ExecutableDirectory() / "plugins";
  std::error_code ec;
  if (fs::is_directory(beside, ec)) return beside;
  const fs::path installed = (LibraryDirectory() / "phaze" / "plugins").lexically_normal();
  if (fs::is_directory(installed, ec)) return installed;
  return beside;
}

}  // namespace phaze
