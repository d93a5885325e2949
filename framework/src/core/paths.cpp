#include "phaze/core/paths.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdlib>

namespace phaze {

std::filesystem::path ShareDirectory() {
  if (const char* env = std::getenv("PHAZE_SHARE_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const std::filesystem::path beside =
      std::filesystem::path(boost::dll::program_location(ec).parent_path().string()) / ".." /
      "share";
  if (!ec && std::filesystem::is_directory(beside / "arch")) return beside.lexically_normal();
  return PHAZE_DEFAULT_SHARE_DIR;
}

}  // namespace phaze
