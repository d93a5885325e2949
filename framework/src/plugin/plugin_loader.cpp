#include "phaze/plugin/plugin_loader.hpp"

#include "phaze/core/paths.hpp"

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <set>

#include "phaze/core/error.hpp"
#include "phaze/plugin/plugin_abi.hpp"

namespace fs = std::filesystem;

namespace phaze {

namespace {

// What makes FILE unsafe to hand to dlopen, or "" when it looks like a complete 64-bit ELF shared
// object (or cannot be read: dlopen then says why). dlopen maps the segments the program headers
// name; a truncated file maps pages past its end, and touching them is SIGBUS inside dlopen, so
// every header and loadable segment must lie inside the file.
std::string ElfProblem(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  Elf64_Ehdr h{};
  if (size < sizeof h || !in.read(reinterpret_cast<char*>(&h), sizeof h) ||
      std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) {
    return "not a shared object (no ELF header)";
  }
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB) {
    return "not a 64-bit little-endian ELF object";
  }
  if (h.e_type != ET_DYN) return "an ELF file but not a shared object (e_type " +
                                 std::to_string(h.e_type) + ")";
  auto inside = [&](std::uint64_t offset, std::uint64_t count, std::uint64_t each) {
    return offset <= size && (each == 0 || count <= (size - offset) / each);
  };
  const std::string truncated = "truncated (" + std::to_string(size) + " bytes): ";
  if (h.e_phentsize != sizeof(Elf64_Phdr) || !inside(h.e_phoff, h.e_phnum, h.e_phentsize)) {
    return truncated + "its program headers lie past the end";
  }
  if (h.e_shoff != 0 && !inside(h.e_shoff, h.e_shnum, h.e_shentsize)) {
    return truncated + "its section headers lie past the end";
  }
  in.seekg(static_cast<std::streamoff>(h.e_phoff));
  for (int i = 0; i < h.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return truncated + "unreadable";
    if (ph.p_type == PT_LOAD && !inside(ph.p_offset, ph.p_filesz, 1)) {
      return truncated + "segment " + std::to_string(i) + " needs " +
             std::to_string(ph.p_offset + ph.p_filesz) + " bytes";
    }
  }
  return "";
}

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

fs::path PluginLoader::DefaultPluginDirectory() { return BundledPluginDirectory(); }

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
  if (const std::string problem = ElfProblem(file); !problem.empty()) {
    throw PluginError(where + ": cannot load: " + problem);
  }
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
    if (lib->has(plugin::kOldEntrySymbol)) {  // ABI ≤ 3: its entry is never called (unsafe)
      throw PluginError(where + ": built for an older phaze plugin ABI (3 or earlier: it exports '" +
                        std::string(plugin::kOldEntrySymbol) + "'); this phaze supports ABI " +
                        std::to_string(plugin::kAbiVersion) +
                        " (rebuild the plugin against this phaze)");
    }
    throw PluginError(where + ": not a Phaze plugin: it does not export the entry symbol '" +
                      std::string(plugin::kEntrySymbol) +
                      "' (define it with PHAZE_PLUGIN_ENTRY(fn) from phaze/plugin/plugin_abi.hpp)");
  }
  // The symbol holds a pointer to the entry function (PHAZE_PLUGIN_ENTRY); a null one is refused
  // rather than called.
  if (lib->get<const void*>(plugin::kEntrySymbol) == nullptr) {
    throw PluginError(where + ": not a Phaze plugin: its entry symbol '" +
                      std::string(plugin::kEntrySymbol) + "' is a null pointer");
  }
  const plugin::PluginHandshake* handshake = nullptr;
  try {
    handshake = lib->get_alias<plugin::EntryFunction>(plugin::kEntrySymbol)();
  } catch (const std::exception& ex) {
    throw PluginError(where + ": the entry function threw: " + ex.what());
  } catch (...) {
    throw PluginError(where + ": the entry function threw something that is not a std::exception");
  }
  // Field by field: each is read only once the ones before it matched.
  if (handshake == nullptr) throw PluginError(where + ": the entry returned no handshake");
  if (handshake->abi_version != plugin::kAbiVersion ||
      handshake->info.abi_version != plugin::kAbiVersion) {
    throw PluginError(where + ": wrong plugin ABI version: got " +
                      std::to_string(handshake->abi_version != plugin::kAbiVersion
                                         ? handshake->abi_version
                                         : handshake->info.abi_version) +
                      ", this phaze supports " +
                      std::to_string(plugin::kAbiVersion) + " (rebuild the plugin against this phaze)");
  }
  if (handshake->size != sizeof(plugin::PluginHandshake)) {
    throw PluginError(where + ": its plugin handshake is " + std::to_string(handshake->size) +
                      " bytes, this phaze's is " + std::to_string(sizeof(plugin::PluginHandshake)) +
                      " (rebuild the plugin against this phaze)");
  }
  const std::string fingerprint = handshake->fingerprint ? handshake->fingerprint : "";
  if (fingerprint != kBuildFingerprint) {
    throw PluginError(where + ": built against other phaze headers (fingerprint '" + fingerprint +
                      "', this phaze '" + kBuildFingerprint +
                      "'): rebuild the plugin against this phaze's headers");
  }
  const plugin::PluginInfo& info = handshake->info;
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
