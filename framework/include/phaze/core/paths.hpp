// Where Phaze finds its data (architecture presets, search spaces, area and cost tables, systems,
// run configs) and its bundled plugins, in a build tree inside the checkout and in an installed
// tree (`cmake --install`, the Debian package: DATADIR/phaze and LIBDIR/phaze/plugins).
// ShareDirectory: $PHAZE_SHARE_DIR; <directory of the phaze executable>/../share (a build tree
// inside the checkout); the installed data beside libphaze_framework (LIBDIR/../share/phaze); the
// checkout's share/ recorded at build time.
#pragma once

#include <filesystem>

namespace phaze {

std::filesystem::path ShareDirectory();
// The workload files: ShareDirectory()/workloads when installed, else the checkout's workloads/
// beside share/.
std::filesystem::path WorkloadsDirectory();
// The bundled plugins: <directory of the executable>/plugins when it exists (a build tree), else
// the installed LIBDIR/phaze/plugins beside libphaze_framework, else the first.
std::filesystem::path BundledPluginDirectory();

}  // namespace phaze
