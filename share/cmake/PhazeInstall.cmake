# What `cmake --install` and `cpack -G DEB` ship besides the targets (framework/CMakeLists.txt:
# phaze, libphaze_framework, the SDK headers; PhazePlugin.cmake: the bundled plugins;
# tests/conformance: the conformance library). Two components: `runtime` (the executable, the
# library, the plugins, the data a run needs) and `sdk` (headers, the CMake package, pkg-config,
# the conformance library) — the Debian packages phaze and phaze-dev.

# The data: presets, spaces, area and cost tables, systems, recipes, run configs and workloads, under
# DATADIR/phaze. The run configs name their models as ../../workloads/… (share/runs beside the
# checkout's workloads/); installed, the workloads sit in DATADIR/phaze/workloads, one level up.
foreach(dir arch area config cost energy placement recipes schedule systems)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/share/${dir} DESTINATION ${PHAZE_INSTALL_DATADIR}
          COMPONENT runtime)
endforeach()
# The validation residuals `phaze plan` draws its error bands from.
install(FILES ${PROJECT_SOURCE_DIR}/share/validation/residuals.csv
        DESTINATION ${PHAZE_INSTALL_DATADIR}/validation COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/workloads/ DESTINATION ${PHAZE_INSTALL_DATADIR}/workloads
        COMPONENT runtime)
install(CODE "
  set(to \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${PHAZE_INSTALL_DATADIR}/runs\")
  file(GLOB runs LIST_DIRECTORIES false \"${PROJECT_SOURCE_DIR}/share/runs/*\")
  foreach(f IN LISTS runs)
    get_filename_component(name \"\${f}\" NAME)
    file(READ \"\${f}\" text)
    string(REPLACE \"../../workloads/\" \"../workloads/\" text \"\${text}\")
    message(STATUS \"Installing: \${to}/\${name}\")
    file(WRITE \"\${to}/\${name}\" \"\${text}\")
  endforeach()" COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/share/runs/plots DESTINATION ${PHAZE_INSTALL_DATADIR}/runs
        COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)

# The CMake package: find_package(Phaze) → Phaze::framework, phaze_add_plugin(), Phaze::conformance
# (when GoogleTest is found), PHAZE_EXECUTABLE, PHAZE_PLUGIN_DIR, PHAZE_DATA_DIR. Versions: a
# plugin needs the same major.minor (the fingerprint then checks the headers exactly).
include(CMakePackageConfigHelpers)
configure_package_config_file(${PROJECT_SOURCE_DIR}/share/cmake/PhazeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/PhazeConfig.cmake INSTALL_DESTINATION ${PHAZE_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR PHAZE_INSTALL_PLUGINDIR PHAZE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/PhazeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(EXPORT PhazeTargets NAMESPACE Phaze:: DESTINATION ${PHAZE_INSTALL_CMAKEDIR} COMPONENT sdk)
install(FILES ${PROJECT_BINARY_DIR}/PhazeConfig.cmake ${PROJECT_BINARY_DIR}/PhazeConfigVersion.cmake
        ${PROJECT_SOURCE_DIR}/share/cmake/PhazePlugin.cmake
        DESTINATION ${PHAZE_INSTALL_CMAKEDIR} COMPONENT sdk)
# pkg-config, relocatable (paths from the .pc file's own directory).
file(RELATIVE_PATH PHAZE_PREFIX_FROM_PC /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${PROJECT_SOURCE_DIR}/share/cmake/phaze.pc.in ${PROJECT_BINARY_DIR}/phaze.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/phaze.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT sdk)

# Debian packages: `cd build && cpack -G DEB` → phaze_<v>_amd64.deb and phaze-dev_<v>_amd64.deb
# (README, "Install"). Library dependencies are read off the binaries (dpkg-shlibdeps).
set(CPACK_PACKAGE_NAME phaze)
set(CPACK_PACKAGE_VENDOR "Phaze developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime sdk)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Phaze developers <phaze@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/lib)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME phaze)
set(CPACK_DEBIAN_SDK_PACKAGE_NAME phaze-dev)
set(CPACK_DEBIAN_SDK_PACKAGE_DEPENDS
    "phaze (= ${PROJECT_VERSION}), libboost-dev (>= 1.74), cmake (>= 3.25), g++")
set(CPACK_DEBIAN_SDK_PACKAGE_SUGGESTS "libgtest-dev")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "phaze: integrated accelerator architecture and device placement search (ICML 2024), with its plugins and data")
set(CPACK_COMPONENT_SDK_DESCRIPTION
    "phaze plugin SDK: headers, CMake package (find_package(Phaze)), pkg-config file and conformance suites")
include(CPack)
