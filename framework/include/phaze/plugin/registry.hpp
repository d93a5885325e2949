// The component registry: estimators, ILP solver backends and parallelism strategies by name.
//
// Plugins (and built-ins, through the same callback) add factories; the host creates components by
// the names given in the run config. Names are unique per kind; a duplicate is an error naming both
// files. Lookups of unknown names fail with a message listing the registered names (sorted).
// Every object created from a plugin keeps that plugin's shared library loaded (shared_ptr to the
// boost::dll::shared_library), so code never outlives its library.
//
// Not a singleton: the host owns one Registry and passes it by reference.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "phaze/core/config_node.hpp"

namespace phaze {

class Estimator;
class SolverBackend;
class ParallelismStrategy;

enum class ComponentKind { kEstimator, kSolverBackend, kParallelismStrategy };
// "estimator", "solver backend", "parallelism strategy".
std::string_view KindName(ComponentKind kind);
// "estimator", "solver", "strategy" — the short form used in listings and JSON.
std::string_view KindShortName(ComponentKind kind);

// Where a component or plugin came from.
struct PluginRecord {
  std::string name;
  std::string version;
  std::string description;
  std::string file;  // absolute path of the shared object, or "<built-in>"
};

struct ComponentInfo {
  ComponentKind kind;
  std::string name;
  std::string description;
  PluginRecord plugin;
};

// A factory receives the component's `params:` map from the run config (an empty map when absent)
// and parses it through ConfigNode, so plugin errors are located like the host's.
template <class T>
using Factory = std::function<std::shared_ptr<T>(const ConfigNode& params)>;

// A component chosen by name, with its `params:` map and where the name was written.
struct ComponentChoice {
  std::string name;
  std::optional<ConfigNode> name_node;  // for located "no X named ..." errors
  std::optional<ConfigNode> params;     // absent → empty map
  ConfigNode Params() const;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(Registry&&) noexcept;
  Registry& operator=(Registry&&) noexcept;

  void AddEstimator(std::string name, std::string description, Factory<Estimator> factory);
  void AddSolverBackend(std::string name, std::string description,
                        Factory<SolverBackend> factory);
  void AddStrategy(std::string name, std::string description,
                   Factory<ParallelismStrategy> factory);

  // Create a component. Unknown name: PluginError "no solver backend named 'x'; registered: a, b".
  // A factory that throws phaze::Error propagates it; any other exception becomes a PluginError
  // naming the plugin and its file.
  std::shared_ptr<Estimator> CreateEstimator(std::string_view name,
                                             const ConfigNode& params) const;
  std::shared_ptr<SolverBackend> CreateSolverBackend(std::string_view name,
                                                     const ConfigNode& params) const;
  std::shared_ptr<ParallelismStrategy> CreateStrategy(std::string_view name,
                                                      const ConfigNode& params) const;
  // Same as above with default (empty) params.
  std::shared_ptr<SolverBackend> CreateSolverBackend(std::string_view name) const;

  bool Has(ComponentKind kind, std::string_view name) const;
  // Sorted names of one kind.
  std::vector<std::string> Names(ComponentKind kind) const;
  // "no solver backend named 'x'; registered: a, b" (or "…; none registered (no plugin …)").
  std::string UnknownNameMessage(ComponentKind kind, std::string_view name) const;
  // All components sorted by kind, then name.
  std::vector<ComponentInfo> Components() const;
  // Loaded plugins in load order.
  const std::vector<PluginRecord>& Plugins() const;

  // --- used by PluginLoader and RegisterBuiltin ---
  // Registers everything `callback` adds as coming from `plugin` (library = the handle that must
  // stay loaded, null for built-ins). Transactional: on any error nothing is added.
  void RegisterPlugin(const PluginRecord& plugin, std::shared_ptr<void> library,
                      const std::function<void(Registry&)>& callback);

 private:
  struct Tables;
  std::unique_ptr<Tables> tables_;
  // Set only while a RegisterPlugin callback runs (on the staging registry).
  const PluginRecord* current_plugin_ = nullptr;
  std::shared_ptr<void> current_library_;
};

// Registers built-in components through the same callback a plugin uses, without dlopen.
void RegisterBuiltin(Registry& registry, const std::string& name, const std::string& version,
                     const std::string& description,
                     const std::function<void(Registry&)>& callback);

}  // namespace phaze
