// Where a "preset name or file" argument points (architectures, systems): an existing file as
// given, else <share>/<subdir>/NAME.yaml for a name without '/'. Otherwise a ConfigError naming
// what was asked for, a did-you-mean, and the presets of the folder.
#pragma once

#include <string>

namespace phaze {

// `what`: "architecture" / "system" (for the message); `listed(stem)`: whether a file of the
// folder is a preset to list (the arch folder also holds search spaces).
std::string FindPresetFile(const std::string& name_or_path, const std::string& subdir,
                           const std::string& what, bool (*listed)(const std::string& stem));

}  // namespace phaze
