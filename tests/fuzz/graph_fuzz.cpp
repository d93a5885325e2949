// libFuzzer target: the graph-file reader (`phaze graph --model FILE.json`, the layer graphs phaze
// writes with -o). Bad input must be a ConfigError, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "phaze/core/config_node.hpp"
#include "phaze/core/error.hpp"
#include "phaze/graph/graph_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)phaze::ParseLayerGraphFile(phaze::ConfigNode::ParseString(text, "fuzz.json"));
  } catch (const phaze::ConfigError&) {
  }
  return 0;
}
