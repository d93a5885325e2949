# CTest Sdk.BundledPluginsUseOnlyTheSdk: every phaze header a bundled plugin, solver backend or the
# plugin example includes is in the plugin SDK (PhazeSdk.cmake) — so what phaze ships to plugin
# authors is enough to build plugins like its own, and the fingerprint covers what they compile
# against. Usage: cmake -DSOURCE_DIR=… -DGENERATED_DIR=… -P this.
include(${SOURCE_DIR}/share/cmake/PhazeSdk.cmake)
phaze_sdk_headers(sdk "${SOURCE_DIR}/framework/include" "${GENERATED_DIR}")
file(GLOB_RECURSE sources "${SOURCE_DIR}/plugins/*.cpp" "${SOURCE_DIR}/plugins/*.hpp"
     "${SOURCE_DIR}/solvers/*.cpp" "${SOURCE_DIR}/solvers/*.hpp"
     "${SOURCE_DIR}/share/examples/*.cpp")
set(bad "")
set(checked 0)
foreach(f IN LISTS sources)
  file(STRINGS "${f}" lines REGEX "^#include \"phaze/")
  foreach(l IN LISTS lines)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" inc "${l}")
    math(EXPR checked "${checked} + 1")
    list(FIND sdk "${inc}" at)
    if(at EQUAL -1 AND NOT inc MATCHES "^phaze/conformance/")
      string(APPEND bad "  ${f}: ${inc}\n")
    endif()
  endforeach()
endforeach()
list(LENGTH sdk n)
if(bad)
  message(FATAL_ERROR "headers outside the plugin SDK (${n} headers, share/cmake/PhazeSdk.cmake):\n${bad}")
endif()
message(STATUS "${checked} phaze includes in plugins, solvers and examples, all in the ${n}-header SDK")
