# phaze_add_plugin(<target> SOURCES <src>... [LIBRARIES <lib>...] [OUTPUT_DIRECTORY <dir>])
#
# Builds a Phaze plugin as a MODULE shared object named <target>.so (no "lib" prefix) into the
# build tree's plugin directory (build/plugins/, where `build/phaze` looks by default), or into
# OUTPUT_DIRECTORY. The plugin links libphaze_framework (shared: one copy of typeinfo, registry and
# error types between host and plugins) and exports only its entry symbol (hidden visibility;
# PHAZE_PLUGIN_ENTRY marks the entry for export). Undefined symbols are allowed at link time, as for
# any module, and caught at load time by phaze (rtld_now) with the dlerror() text.
#
# Out of tree (find_package(Phaze), share/examples/estimator-plugin) the same function builds a
# plugin against an installed phaze: into ${CMAKE_CURRENT_BINARY_DIR} unless OUTPUT_DIRECTORY says
# otherwise; load it with `phaze --plugin <file>` or PHAZE_PLUGIN_PATH. In phaze's own tree a
# plugin built into the default directory is also installed with phaze (LIBDIR/phaze/plugins).
function(phaze_add_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_DIRECTORY" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "phaze_add_plugin(${target}): SOURCES is required")
  endif()
  set(bundled OFF)
  if(NOT ARG_OUTPUT_DIRECTORY)
    if(DEFINED PHAZE_PLUGIN_OUTPUT_DIR)
      set(ARG_OUTPUT_DIRECTORY ${PHAZE_PLUGIN_OUTPUT_DIR})
      set(bundled ${PHAZE_INSTALL_BUNDLED_PLUGINS})
    else()
      set(ARG_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    endif()
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Phaze::framework ${ARG_LIBRARIES})
  if(TARGET phaze_fingerprint)
    add_dependencies(${target} phaze_fingerprint)  # its entry compiles the build fingerprint in
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(bundled)
    # LIBDIR/phaze/plugins/x.so finds LIBDIR/libphaze_framework.so two levels up.
    set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/../..")
    install(TARGETS ${target} LIBRARY DESTINATION ${PHAZE_INSTALL_PLUGINDIR} COMPONENT runtime)
  endif()
endfunction()
