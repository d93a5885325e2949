# Writes OUT (phaze/build_fingerprint.hpp): kBuildFingerprint = "<version>-<first 16 hex digits of
# the SHA-256 of every public header under INCLUDE_DIR>". Run at every build (framework/
# CMakeLists.txt), it rewrites OUT only when the headers changed, so nothing rebuilds otherwise.
# The host and every plugin compile the string in; the loader refuses a plugin whose string differs
# (it was built against other headers). Usage: cmake -DINCLUDE_DIR=… -DOUT=… -DVERSION=… -P this.
file(GLOB_RECURSE headers RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/phaze/*.hpp")
list(SORT headers)
set(all "")
foreach(h IN LISTS headers)
  file(SHA256 "${INCLUDE_DIR}/${h}" digest)
  string(APPEND all "${h}:${digest}\n")
endforeach()
string(SHA256 combined "${all}")
string(SUBSTRING "${combined}" 0 16 short)
set(text "// Generated at build time by share/cmake/PhazeFingerprint.cmake: the version and a hash of\n// the public headers a plugin compiles against (phaze/plugin/plugin_abi.hpp).\n#pragma once\n\nnamespace phaze {\ninline constexpr const char* kBuildFingerprint = \"${VERSION}-${short}\";\n}\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
