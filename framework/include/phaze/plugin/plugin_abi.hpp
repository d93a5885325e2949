// The binary interface between the `phaze` host and a plugin shared object.
//
// A plugin writes a function returning a PluginInfo and names it with PHAZE_PLUGIN_ENTRY(fn); the
// macro exports one entry symbol, `phaze_plugin_handshake`, a function without arguments returning
// a pointer to a static PluginHandshake. The host reads the handshake's fields in order and stops
// at the first that does not match, so it never uses a field whose layout it cannot trust:
//   1. `abi_version` — first forever: the interface generation (kAbiVersion);
//   2. `size` — sizeof(PluginHandshake) as the plugin was compiled;
//   3. `fingerprint` — kBuildFingerprint as the plugin was compiled: phaze's version and a hash of
//      every public header (generated at build time, share/cmake/PhazeFingerprint.cmake). A plugin
//      compiled against other headers — another checkout, an edited interface — is refused with a
//      message saying so, even when nobody bumped kAbiVersion;
//   4. `info` — the plugin's name, version, description and its `register_components` callback,
//      which receives the host's Registry and adds estimators, solver backends or parallelism
//      strategies to it (the LLVM pass-plugin pattern).
// Returning a pointer (not a struct by value, as ABI ≤ 3 did) keeps the call itself safe when the
// struct changes: the caller never needs to know the struct's size to make the call.
//
// When to bump kAbiVersion: whenever a type a plugin compiles against changes layout or meaning —
// PluginHandshake, PluginInfo, the Registry's Add* functions, the Estimator, SolverBackend or
// ParallelismStrategy interfaces and every struct they take or return (OpWork, OpEstimate,
// SolveOptions, SolveResult, LayerGraph, …). The fingerprint catches any header change
// mechanically; the version says to a person which generation of the interface a plugin is for.
//
//   PluginInfo MyPlugin() {
//     return {phaze::plugin::kAbiVersion, "my-plugin", "1.0.0", "what it adds",
//             [](phaze::Registry& r) { r.AddEstimator("mine", "…", factory); }};
//   }
//   PHAZE_PLUGIN_ENTRY(MyPlugin)
#pragma once

#include <boost/dll/alias.hpp>
#include <cstdint>

#include "phaze/build_fingerprint.hpp"

namespace phaze {
class Registry;
}

namespace phaze::plugin {

// 5: Operator states neutral axes (OpAxes) and collective_stride instead of Megatron's
//    tp_role, and its collectives are CollectiveKind enums; strategies slice with
//    phaze/strategy/slicing.hpp; LayerGraph::weight_replicas. 4: the entry returns a PluginHandshake pointer (size, fingerprint); SolveOptions and OpWork
//    changed since 1. 3: OpEstimate gained kernels. 2: Estimator lost CollectiveTimeS, AreaMm2.
// 8: EnergyTechnology::voltage_floor_clock.
inline constexpr std::uint32_t kAbiVersion = 9;  // 9: OpEstimate::exclusive
inline constexpr const char* kEntrySymbol = "phaze_plugin_handshake";
// The symbol of ABI ≤ 3 (an entry returning PluginInfo by value): recognised, never called.
inline constexpr const char* kOldEntrySymbol = "phaze_plugin_entry";

struct PluginInfo {
  std::uint32_t abi_version;  // kAbiVersion as the plugin was compiled
  const char* name;           // unique among loaded plugins, e.g. "cbc"
  const char* version;        // the plugin's own version, e.g. "1.0.0"
  const char* description;    // one line
  void (*register_components)(Registry& registry);
};

struct PluginHandshake {
  std::uint32_t abi_version;  // always the first field
  std::uint32_t size;         // sizeof(PluginHandshake) in the plugin
  const char* fingerprint;    // kBuildFingerprint in the plugin
  PluginInfo info;
};

using EntryFunction = const PluginHandshake*();

// The handshake of `info` as this translation unit was compiled (what PHAZE_PLUGIN_ENTRY returns).
inline PluginHandshake MakeHandshake(const PluginInfo& info) {
  return {kAbiVersion, static_cast<std::uint32_t>(sizeof(PluginHandshake)), kBuildFingerprint,
          info};
}

}  // namespace phaze::plugin

// Exports the handshake of `fn` (a function `phaze::plugin::PluginInfo fn()`) as the plugin's
// entry symbol. `fn` runs once, on the first call.
#define PHAZE_PLUGIN_ENTRY(fn)                                                   \
  static const ::phaze::plugin::PluginHandshake* phaze_plugin_handshake_impl() { \
    static const ::phaze::plugin::PluginHandshake handshake =                   \
        ::phaze::plugin::MakeHandshake(fn());                                    \
    return &handshake;                                                           \
  }                                                                              \
  BOOST_DLL_ALIAS(phaze_plugin_handshake_impl, phaze_plugin_handshake)
