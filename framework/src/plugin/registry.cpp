#include "phaze/plugin/registry.hpp"

#include <algorithm>

#include "phaze/core/error.hpp"

namespace phaze {

ConfigNode ComponentChoice::Params() const {
  if (params) return *params;
  std::string source = name_node ? name_node->Source() : "<defaults>";
  std::string path = name_node ? name_node->Path() : "params";
  auto dot = path.rfind('.');
  path = (dot == std::string::npos ? std::string() : path.substr(0, dot + 1)) + "params";
  return ConfigNode::EmptyMap(source, path);
}


namespace {

// Keeps the plugin library loaded for as long as the object lives. Members are destroyed in reverse
// order: the object first, then (possibly) the library.
template <class T>
struct Holder {
  std::shared_ptr<void> library;
  std::shared_ptr<T> object;
};

template <class T>
struct Entry {
  ComponentInfo info;
  std::shared_ptr<void> library;  // declared before the factory: destroyed after it
  Factory<T> factory;
};

template <class T>
using Table = std::map<std::string, Entry<T>, std::less<>>;

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

}  // namespace

std::string_view KindName(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::kEstimator: return "estimator";
    case ComponentKind::kSolverBackend: return "solver backend";
    case ComponentKind::kParallelismStrategy: return "parallelism strategy";
  }
  return "component";
}

std::string_view KindShortName(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::kEstimator: return "estimator";
    case ComponentKind::kSolverBackend: return "solver";
    case ComponentKind::kParallelismStrategy: return "strategy";
  }
  return "component";
}

struct Registry::Tables {
  Table<Estimator> estimators;
  Table<SolverBackend> solvers;
  Table<ParallelismStrategy> strategies;
  std::vector<PluginRecord> plugins;

  template <class F>
  void ForEachKind(F&& f) const {
    f(ComponentKind::kEstimator, estimators);
    f(ComponentKind::kSolverBackend, solvers);
    f(ComponentKind::kParallelismStrategy, strategies);
  }
};

Registry::Registry() : tables_(std::make_unique<Tables>()) {}
Registry::~Registry() = default;
Registry::Registry(Registry&&) noexcept = default;
Registry& Registry::operator=(Registry&&) noexcept = default;

namespace {

template <class T>
void Add(Table<T>& table, ComponentKind kind, std::string name, std::string description,
         Factory<T> factory, const PluginRecord* plugin, const std::shared_ptr<void>& library) {
  if (plugin == nullptr) {
    throw InvalidArgumentError("Registry::Add" + std::string(KindShortName(kind)) + "('" + name +
                               "') called outside a plugin's register callback");
  }
  if (name.empty()) {
    throw PluginError("plugin '" + plugin->name + "' (" + plugin->file + ") registers a " +
                      std::string(KindName(kind)) + " with an empty name");
  }
  if (!factory) {
    throw PluginError("plugin '" + plugin->name + "' (" + plugin->file + ") registers " +
                      std::string(KindName(kind)) + " '" + name + "' without a factory");
  }
  if (auto it = table.find(name); it != table.end()) {
    throw PluginError("duplicate " + std::string(KindName(kind)) + " '" + name +
                      "': registered twice by " + plugin->file);
  }
  Entry<T> e{ComponentInfo{kind, name, std::move(description), *plugin}, library,
             std::move(factory)};
  table.emplace(std::move(name), std::move(e));
}

template <class T>
std::shared_ptr<T> Create(const Table<T>& table, const Registry& reg, ComponentKind kind,
                          std::string_view name, const ConfigNode& params) {
  auto it = table.find(name);
  if (it == table.end()) throw PluginError(reg.UnknownNameMessage(kind, name));
  const Entry<T>& e = it->second;
  std::shared_ptr<T> obj;
  std::string what = std::string(KindName(kind)) + " '" + e.info.name + "' from plugin '" +
                     e.info.plugin.name + "' (" + e.info.plugin.file + ")";
  try {
    obj = e.factory(params);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& ex) {
    throw PluginError(what + " failed to construct: " + ex.what());
  } catch (...) {
    throw PluginError(what + " failed to construct: unknown exception");
  }
  if (!obj) throw PluginError(what + " failed to construct: the factory returned null");
  if (!e.library) return obj;
  auto holder = std::make_shared<Holder<T>>(Holder<T>{e.library, std::move(obj)});
  T* raw = holder->object.get();
  return std::shared_ptr<T>(std::move(holder), raw);
}

}  // namespace

void Registry::AddEstimator(std::string name, std::string description,
                            Factory<Estimator> factory) {
  Add(tables_->estimators, ComponentKind::kEstimator, std::move(name), std::move(description),
      std::move(factory), current_plugin_, current_library_);
}
void Registry::AddSolverBackend(std::string name, std::string description,
                                Factory<SolverBackend> factory) {
  Add(tables_->solvers, ComponentKind::kSolverBackend, std::move(name), std::move(description),
      std::move(factory), current_plugin_, current_library_);
}
void Registry::AddStrategy(std::string name, std::string description,
                           Factory<ParallelismStrategy> factory) {
  Add(tables_->strategies, ComponentKind::kParallelismStrategy, std::move(name),
      std::move(description), std::move(factory), current_plugin_, current_library_);
}

std::shared_ptr<Estimator> Registry::CreateEstimator(std::string_view name,
                                                     const ConfigNode& params) const {
  return Create(tables_->estimators, *this, ComponentKind::kEstimator, name, params);
}
std::shared_ptr<SolverBackend> Registry::CreateSolverBackend(std::string_view name,
                                                             const ConfigNode& params) const {
  return Create(tables_->solvers, *this, ComponentKind::kSolverBackend, name, params);
}
std::shared_ptr<SolverBackend> Registry::CreateSolverBackend(std::string_view name) const {
  return CreateSolverBackend(name, ConfigNode::EmptyMap("<defaults>", "solver.params"));
}
std::shared_ptr<ParallelismStrategy> Registry::CreateStrategy(std::string_view name,
                                                              const ConfigNode& params) const {
  return Create(tables_->strategies, *this, ComponentKind::kParallelismStrategy, name, params);
}

bool Registry::Has(ComponentKind kind, std::string_view name) const {
  bool found = false;
  tables_->ForEachKind([&](ComponentKind k, const auto& table) {
    if (k == kind && table.find(name) != table.end()) found = true;
  });
  return found;
}

std::vector<std::string> Registry::Names(ComponentKind kind) const {
  std::vector<std::string> names;
  tables_->ForEachKind([&](ComponentKind k, const auto& table) {
    if (k != kind) return;
    for (const auto& [n, e] : table) names.push_back(n);
  });
  return names;  // std::map keeps them sorted
}

std::string Registry::UnknownNameMessage(ComponentKind kind, std::string_view name) const {
  std::string msg = "no " + std::string(KindName(kind)) + " named '" + std::string(name) + "'";
  auto names = Names(kind);
  if (names.empty()) {
    msg += "; none registered (no plugin providing one was loaded: check --plugin, --plugin-dir "
           "and PHAZE_PLUGIN_PATH, or run 'phaze plugins')";
  } else {
    msg += "; registered: " + Join(names);
  }
  return msg;
}

std::vector<ComponentInfo> Registry::Components() const {
  std::vector<ComponentInfo> out;
  tables_->ForEachKind([&](ComponentKind, const auto& table) {
    for (const auto& [n, e] : table) out.push_back(e.info);
  });
  return out;
}

const std::vector<PluginRecord>& Registry::Plugins() const { return tables_->plugins; }

namespace {
template <class T>
void CheckNoClash(const Table<T>& existing, const Table<T>& staged, ComponentKind kind) {
  for (const auto& [name, e] : staged) {
    if (auto it = existing.find(name); it != existing.end()) {
      throw PluginError("duplicate " + std::string(KindName(kind)) + " '" + name +
                        "': registered by " + it->second.info.plugin.file + " and by " +
                        e.info.plugin.file);
    }
  }
}
template <class T>
void MoveAll(Table<T>& into, Table<T>& from) {
  for (auto& [name, e] : from) into.emplace(name, std::move(e));
}
}  // namespace

void Registry::RegisterPlugin(const PluginRecord& plugin, std::shared_ptr<void> library,
                              const std::function<void(Registry&)>& callback) {
  for (const auto& p : tables_->plugins) {
    if (p.name == plugin.name) {
      throw PluginError("duplicate plugin name '" + plugin.name + "': loaded from " + p.file +
                        " and from " + plugin.file);
    }
  }
  Registry staged;
  staged.current_plugin_ = &plugin;
  staged.current_library_ = std::move(library);
  try {
    callback(staged);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& ex) {
    throw PluginError("plugin '" + plugin.name + "' (" + plugin.file +
                      ") failed while registering its components: " + ex.what());
  } catch (...) {
    throw PluginError("plugin '" + plugin.name + "' (" + plugin.file +
                      ") failed while registering its components: it threw something that is not "
                      "a std::exception");
  }
  CheckNoClash(tables_->estimators, staged.tables_->estimators, ComponentKind::kEstimator);
  CheckNoClash(tables_->solvers, staged.tables_->solvers, ComponentKind::kSolverBackend);
  CheckNoClash(tables_->strategies, staged.tables_->strategies,
               ComponentKind::kParallelismStrategy);
  MoveAll(tables_->estimators, staged.tables_->estimators);
  MoveAll(tables_->solvers, staged.tables_->solvers);
  MoveAll(tables_->strategies, staged.tables_->strategies);
  tables_->plugins.push_back(plugin);
}

void RegisterBuiltin(Registry& registry, const std::string& name, const std::string& version,
                     const std::string& description,
                     const std::function<void(Registry&)>& callback) {
  registry.RegisterPlugin(PluginRecord{name, version, description, "<built-in>"}, nullptr,
                          callback);
}

}  // namespace phaze
