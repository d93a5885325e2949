// Where Phaze finds its data (architecture presets, search spaces, area tables): the `share/`
// directory. Resolution order: $PHAZE_SHARE_DIR; <directory of the phaze executable>/../share (a
// build tree inside the checkout); the checkout's share/ recorded at build time.
#pragma once

#include <filesystem>

namespace phaze {

std::filesystem::path ShareDirectory();

}  // namespace phaze
