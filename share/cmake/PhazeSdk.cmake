# The plugin SDK: the public headers a plugin compiles against — the plugin ABI, the registry, the
# estimator, parallelism-strategy and solver-backend interfaces, the device and energy models an
# estimator may build on, and every phaze header they include (the closure, found by reading the
# `#include "phaze/…"` lines). `cmake --install` installs exactly these; the build fingerprint
# (PhazeFingerprint.cmake) hashes exactly these, so editing a framework header outside the SDK
# no longer refuses every plugin. tests/CMakeLists.txt checks that the bundled plugins include
# nothing else.
set(PHAZE_SDK_ROOTS
  phaze/plugin/plugin_abi.hpp
  phaze/plugin/registry.hpp
  phaze/estimate/estimator.hpp
  phaze/estimate/device_model.hpp
  phaze/estimate/energy_model.hpp
  phaze/estimate/vector_cycles.hpp
  phaze/strategy/parallelism_strategy.hpp
  phaze/strategy/slicing.hpp
  phaze/ilp/solver_backend.hpp
  phaze/core/files.hpp
  phaze/version.hpp)

# phaze_sdk_headers(<out-var> <include-dir>...): the SDK's headers, relative ("phaze/…"), sorted;
# each is looked up in the include directories in order (generated headers: version.hpp,
# build_fingerprint.hpp).
function(phaze_sdk_headers out)
  set(dirs ${ARGN})
  set(todo ${PHAZE_SDK_ROOTS})
  set(seen "")
  while(todo)
    list(POP_FRONT todo h)
    list(FIND seen "${h}" at)  # not IN_LIST: -P scripts run without a policy version
    if(at GREATER -1)
      continue()
    endif()
    list(APPEND seen ${h})
    foreach(d IN LISTS dirs)
      if(EXISTS "${d}/${h}")
        file(STRINGS "${d}/${h}" lines REGEX "^#include \"phaze/")
        foreach(l IN LISTS lines)
          string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${l}")
          list(APPEND todo ${inc})
        endforeach()
        break()
      endif()
    endforeach()
  endwhile()
  list(SORT seen)
  set(${out} ${seen} PARENT_SCOPE)
endfunction()
