// The binary interface between the `phaze` host and a plugin shared object.
//
// A plugin exports exactly one entry symbol, `phaze_plugin_entry`, with PHAZE_PLUGIN_ENTRY(fn):
// `fn` returns a PluginInfo whose `register_components` callback receives the host's Registry and
// adds estimators, solver backends or parallelism strategies to it (the LLVM pass-plugin pattern).
// The host checks `abi_version` before using any other field: the field stays first forever, and
// kAbiVersion is bumped whenever PluginInfo, Registry or an interface class changes layout.
//
//   PluginInfo MyPlugin() {
//     return {phaze::plugin::kAbiVersion, "my-plugin", "1.0.0", "what it adds",
//             [](phaze::Registry& r) { r.AddEstimator("mine", "…", factory); }};
//   }
//   PHAZE_PLUGIN_ENTRY(MyPlugin)
#pragma once

#include <boost/dll/alias.hpp>
#include <cstdint>

namespace phaze {
class Registry;
}

namespace phaze::plugin {

inline constexpr std::uint32_t kAbiVersion = 3;  // 3: OpEstimate gained kernels
// 2: Estimator lost CollectiveTimeS and AreaMm2
inline constexpr const char* kEntrySymbol = "phaze_plugin_entry";

struct PluginInfo {
  std::uint32_t abi_version;  // must equal kAbiVersion of the host; always the first field
  const char* name;           // unique among loaded plugins, e.g. "cbc"
  const char* version;        // the plugin's own version, e.g. "1.0.0"
  const char* description;    // one line
  void (*register_components)(Registry& registry);
};

using EntryFunction = PluginInfo();

}  // namespace phaze::plugin

// Exports `fn` (a function `phaze::plugin::PluginInfo fn()`) as the plugin's entry symbol.
#define PHAZE_PLUGIN_ENTRY(fn) BOOST_DLL_ALIAS(fn, phaze_plugin_entry)
