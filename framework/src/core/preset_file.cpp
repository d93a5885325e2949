#include "phaze/core/preset_file.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "phaze/core/config_node.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/paths.hpp"

namespace phaze {

std::string FindPresetFile(const std::string& name_or_path, const std::string& subdir,
                           const std::string& what, bool (*listed)(const std::string& stem)) {
  if (std::filesystem::is_regular_file(name_or_path)) return name_or_path;
  const std::filesystem::path dir = ShareDirectory() / subdir;
  const std::filesystem::path preset = dir / (name_or_path + ".yaml");
  if (name_or_path.find('/') == std::string::npos && std::filesystem::is_regular_file(preset)) {
    return preset.string();
  }
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const auto& p = e.path();
    if (p.extension() == ".yaml" && listed(p.stem().string())) names.push_back(p.stem().string());
  }
  std::sort(names.begin(), names.end());
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  std::string hint;
  if (auto guess = DidYouMean(name_or_path, names)) hint = "; did you mean '" + *guess + "'?";
  throw ConfigError("no " + what + " file or preset named '" + name_or_path + "'" + hint +
                    "  presets in " + dir.string() + ": " + (list.empty() ? "none" : list));
}

}  // namespace phaze
