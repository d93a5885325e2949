// Finds plugin shared objects and loads them into a Registry.
//
// Sources, all optional: explicit files (--plugin PATH), directories (--plugin-dir DIR), the
// PHAZE_PLUGIN_PATH value (colon-separated files or directories; the host reads the variable and
// passes the text in), and a default directory next to the executable (`<exe dir>/plugins`, so
// `build/phaze` finds `build/plugins/`). Directories contribute their `*.so` files. The union is
// de-duplicated by canonical path and loaded in sorted path order, so the load order never
// depends on the order of flags or of readdir().
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "phaze/plugin/registry.hpp"

namespace phaze {

struct PluginSources {
  std::vector<std::string> files;
  std::vector<std::string> directories;
  std::string env_path;  // the value of PHAZE_PLUGIN_PATH, "" when unset
  bool use_default_directory = true;
  std::string default_directory;  // filled by DefaultPluginDirectory() when empty
};

class PluginLoader {
 public:
  // The bundled plugins: BundledPluginDirectory() (phaze/core/paths.hpp), <directory of the
  // running executable>/plugins in a build tree, LIBDIR/phaze/plugins when installed.
  static std::filesystem::path DefaultPluginDirectory();

  // The sorted, de-duplicated list of plugin files. Missing explicit files or directories are a
  // PluginError (a missing *default* directory is silently skipped).
  static std::vector<std::filesystem::path> Discover(const PluginSources& sources);

  // Loads one shared object (rtld_now) and registers its components. Errors (cannot open, with the
  // real dlerror() text; no entry symbol; wrong ABI version; registration failure; duplicate names)
  // are PluginErrors naming the file.
  static void Load(const std::filesystem::path& file, Registry& registry);

  // Discover + Load each; returns the files loaded.
  static std::vector<std::filesystem::path> LoadAll(const PluginSources& sources,
                                                    Registry& registry);
};

}  // namespace phaze
