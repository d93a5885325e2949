# Writes OUT (phaze/build_fingerprint.hpp): kBuildFingerprint = "<version>-<first 16 hex digits of
# the SHA-256 of every plugin-SDK header under INCLUDE_DIR>" (PhazeSdk.cmake: the headers a plugin
# compiles against). Run at every build (framework/CMakeLists.txt), it rewrites OUT only when those
# headers changed, so nothing rebuilds otherwise. The host and every plugin compile the string in;
# the loader refuses a plugin whose string differs (it was built against other headers).
# Usage: cmake -DINCLUDE_DIR=… -DOUT=… -DVERSION=… -P this.
include(${CMAKE_CURRENT_LIST_DIR}/PhazeSdk.cmake)
phaze_sdk_headers(headers "${INCLUDE_DIR}")
set(all "")
foreach(h IN LISTS headers)
  if(EXISTS "${INCLUDE_DIR}/${h}")  # the generated headers are not hashed
    file(SHA256 "${INCLUDE_DIR}/${h}" digest)
    string(APPEND all "${h}:${digest}\n")
  endif()
endforeach()
string(SHA256 combined "${all}")
string(SUBSTRING "${combined}" 0 16 short)
set(text "// Generated at build time by share/cmake/PhazeFingerprint.cmake: the version and a hash of\n// the plugin-SDK headers a plugin compiles against (phaze/plugin/plugin_abi.hpp).\n#pragma once\n\nnamespace phaze {\ninline constexpr const char* kBuildFingerprint = \"${VERSION}-${short}\";\n}\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
