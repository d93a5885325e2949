#include "phaze/plugin/plugin_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <set>

#include "phaze/core/error.hpp"
#include "phaze/plugin/plugin_abi.hpp"

namespace fs = std::filesystem;

namespace phaze {

namespace {

void AddDirectory(const fs::path& dir, std::set<fs::path>& out, bool must_exist,
                  const std::string& origin) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (must_exist) {
      throw PluginError(origin + ": plugin directory '" + dir.string() +
                        "' does not exist or is not a directory");
    }
    return;
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".so") {
      out.insert(fs::weakly_canonical(entry.path()));
    }
  }
  if (ec) throw PluginError(origin + ": cannot list '" + dir.string() + "': " + ec.message());
}

void AddFile(const fs::path& file, std::set<fs::path>& out, const std::string& origin) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    throw PluginError(origin + ": plugin file '" + file.string() + "' does not exist");
  }
  out.insert(fs::weakly_canonical(file));
}

}  // namespace

fs::path PluginLoader::DefaultPluginDirectory() {
  return fs::path(boost::dll::program_location().parent_path().string()) / "plugins";
}

std::vector<fs::path> PluginLoader::Discover(const PluginSources& sources) {
  std::set<fs::path> found;
  for (const auto& f : sources.files) AddFile(f, found, "--plugin");
  for (const auto& d : sources.directories) AddDirectory(d, found, true, "--plugin-dir");
  size_t start = 0;
  const std::string& env = sources.env_path;
  while (start <= env.size() && !env.empty()) {
    size_t end = env.find(':', start);
    if (end == std::string::npos) end = env.size();
    std::string item = env.substr(start, end - start);
    if (!item.empty()) {
      std::error_code ec;
      if (fs::is_directory(item, ec)) {
        AddDirectory(item, found, true, "PHAZE_PLUGIN_PATH");
      } else {
        AddFile(item, found, "PHAZE_PLUGIN_PATH");
      }
    }
    start = end + 1;
  }
  if (sources.use_default_directory) {
    fs::path dir = sources.default_directory.empty() ? DefaultPluginDirectory()
                                                     : fs::path(sources.default_directory);
    AddDirectory(dir, found, false, "default plugin directory");
  }
  return {found.begin(), found.end()};  // std::set of paths: sorted
}

void PluginLoader::Load(const fs::path& file, Registry& registry) {
  const std::string where = "plugin '" + file.string() + "'";
  // Open once with dlopen ourselves to get the real dlerror() text on failure (Boost.DLL 1.74 wraps
  // every failure as "Bad file descriptor"); on success Boost's load below just takes a reference.
  dlerror();
  void* probe = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (probe == nullptr) {
    const char* real = dlerror();
    throw PluginError(where + ": cannot load: " + (real ? std::string(real) : "unknown dlopen error"));
  }
  auto lib = std::make_shared<boost::dll::shared_library>();
  try {
    lib->load(boost::dll::fs::path(file.string()), boost::dll::load_mode::rtld_now);
  } catch (const std::exception& ex) {
    dlclose(probe);
    throw PluginError(where + ": cannot load: " + ex.what());
  }
  dlclose(probe);
  if (!lib->has(plugin::kEntrySymbol)) {
    throw PluginError(where + ": not a Phaze plugin: it does not export the entry symbol '" +
                      std::string(plugin::kEntrySymbol) +
                      "' (define it with PHAZE_PLUGIN_ENTRY(fn) from phaze/plugin/plugin_abi.hpp)");
  }
  plugin::PluginInfo info{};
  try {
    info = lib->get_alias<plugin::EntryFunction>(plugin::kEntrySymbol)();
  } catch (const std::exception& ex) {
    throw PluginError(where + ": the entry function threw: " + ex.what());
  }
  if (info.abi_version != plugin::kAbiVersion) {
    throw PluginError(where + ": wrong plugin ABI version: got " +
                      std::to_string(info.abi_version) + ", this phaze supports " +
                      std::to_string(plugin::kAbiVersion) + " (rebuild the plugin against this phaze)");
  }
  if (info.name == nullptr || *info.name == '\0' || info.register_components == nullptr) {
    throw PluginError(where + ": the entry returns no name or no register callback");
  }
  PluginRecord record{info.name, info.version ? info.version : "",
                      info.description ? info.description : "", file.string()};
  auto callback = info.register_components;
  registry.RegisterPlugin(record, std::shared_ptr<void>(lib, lib.get()),
                          [callback](Registry& r) { callback(r); });
}

std::vector<fs::path> PluginLoader::LoadAll(const PluginSources& sources, Registry& registry) {
  auto files = Discover(sources);
  for (const auto& f : files) Load(f, registry);
  return files;
}

}  // namespace phaze
