// libFuzzer target: the YAML/JSON config layer and the readers built on it. Any document must
// parse or fail with phaze::ConfigError (a located message) — never crash, hang or leak through
// another exception type. Reads it as a model file (phaze YAML, and a Hugging Face config when it
// has a model_type) and as a run-config-like tree of typed reads.
#include <cstddef>
#include <cstdint>
#include <string>

#include "phaze/core/config_node.hpp"
#include "phaze/core/error.hpp"
#include "phaze/core/json.hpp"
#include "phaze/graph/model_spec.hpp"

namespace {

// Every typed read on every node, as the readers do.
void Walk(const phaze::ConfigNode& n, int depth) {
  if (depth > 64) return;
  try { (void)n.AsIntInRange(1, 1 << 20); } catch (const phaze::ConfigError&) {}
  try { (void)n.AsPositiveDouble(); } catch (const phaze::ConfigError&) {}
  try { (void)n.AsBool(); } catch (const phaze::ConfigError&) {}
  try { (void)n.AsString(); } catch (const phaze::ConfigError&) {}
  (void)n.Describe();
  (void)n.ToJson().Dump(-1);
  if (n.IsMap()) {
    try { n.ExpectKeys({"a", "models", "name"}); } catch (const phaze::ConfigError&) {}
    for (const auto& [key, child] : n.Entries()) Walk(child, depth + 1);
  } else if (n.IsSequence()) {
    for (const auto& child : n.Elements()) Walk(child, depth + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const phaze::ConfigNode root = phaze::ConfigNode::ParseString(text, "fuzz.yaml");
    Walk(root, 0);
    try { (void)phaze::ParseModelSpec(root); } catch (const phaze::ConfigError&) {}
    try { (void)phaze::ParseWorkload(root); } catch (const phaze::ConfigError&) {}  // HF configs
  } catch (const phaze::ConfigError&) {
  }
  return 0;
}
