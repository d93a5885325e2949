// `phaze plugins`: every plugin found (name, version, file) and every component it registers
// (kind, name, description); `--output FILE` writes the same as JSON.
#include <algorithm>
#include <iomanip>

#include "commands.hpp"
#include "phaze/core/files.hpp"
#include "phaze/core/json.hpp"

namespace phaze::cli {

void AddPluginsOptions(boost::program_options::options_description&) {}

int RunPlugins(CommandContext& ctx) {
  const auto components = ctx.registry.Components();
  const auto& plugins = ctx.registry.Plugins();
  Json doc = Json::MakeObject();
  Json plugins_json = Json::MakeArray();
  for (const auto& p : plugins) {
    Json pj = Json::MakeObject();
    pj["name"] = p.name;
    pj["version"] = p.version;
    pj["description"] = p.description;
    pj["file"] = p.file;
    Json comps = Json::MakeArray();
    for (const auto& c : components) {
      if (c.plugin.file != p.file || c.plugin.name != p.name) continue;
      Json cj = Json::MakeObject();
      cj["kind"] = std::string(KindShortName(c.kind));
      cj["name"] = c.name;
      cj["description"] = c.description;
      comps.Push(cj);
    }
    pj["components"] = comps;
    plugins_json.Push(pj);
  }
  doc["plugins"] = plugins_json;
  if (!ctx.global.output.empty()) WriteTextFileAtomic(ctx.global.output, doc.Dump() + "\n");

  if (plugins.empty()) {
    ctx.out << "no plugins found (searched --plugin, --plugin-dir, PHAZE_PLUGIN_PATH";
    if (ctx.global.plugins.use_default_directory) {
      ctx.out << " and " << PluginLoader::DefaultPluginDirectory().string();
    }
    ctx.out << ")\n";
    return 0;
  }
  // One row per component, grouped by plugin; plugins without components get one row too.
  struct Row {
    std::string kind, name, version, plugin, file;
  };
  std::vector<Row> rows;
  for (const auto& c : components) {
    rows.push_back({std::string(KindShortName(c.kind)), c.name, c.plugin.version, c.plugin.name,
                    c.plugin.file});
  }
  for (const auto& p : plugins) {
    bool any = std::any_of(components.begin(), components.end(),
                           [&](const ComponentInfo& c) { return c.plugin.file == p.file; });
    if (!any) rows.push_back({"-", "-", p.version, p.name, p.file});
  }
  Row header{"KIND", "NAME", "VERSION", "PLUGIN", "FILE"};
  size_t w[4] = {header.kind.size(), header.name.size(), header.version.size(),
                 header.plugin.size()};
  for (const auto& r : rows) {
    w[0] = std::max(w[0], r.kind.size());
    w[1] = std::max(w[1], r.name.size());
    w[2] = std::max(w[2], r.version.size());
    w[3] = std::max(w[3], r.plugin.size());
  }
  auto print = [&](const Row& r) {
    ctx.out << std::left << std::setw(static_cast<int>(w[0] + 2)) << r.kind
            << std::setw(static_cast<int>(w[1] + 2)) << r.name
            << std::setw(static_cast<int>(w[2] + 2)) << r.version
            << std::setw(static_cast<int>(w[3] + 2)) << r.plugin << r.file << "\n";
  };
  print(header);
  for (const auto& r : rows) print(r);
  ctx.out << plugins.size() << " plugin(s), " << components.size() << " component(s)\n";
  return 0;
}

}  // namespace phaze::cli
