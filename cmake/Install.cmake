# Install rules and the Debian package (CPack), for the native build only.
#
#   <prefix>/bin/gcollect, gtrace, gtrace-counters, gtrace-ui      what a user runs (each where built)
#   <prefix>/<libdir>/gtrace/libgtrace_inject.so                   private: loaded by the CUDA driver, never linked
#   <prefix>/<libdir>/gtrace/libgtrace_osrt.so                     private: preloaded by gcollect --trace=osrt
#   <prefix>/share/gtrace/web/                                     the browser page, from a wasm build (GT_WEB_DIR)
#   <prefix>/lib/systemd/system/gtrace-serve.service               the team server unit (not enabled)
#
# gcollect finds the injection library at <bindir>/GT_INJECT_REL_FROM_BINDIR (collector/CMakeLists.txt), and
# `gtrace serve` the page at <bindir>/../share/gtrace/web, so an installed tree can be moved as a whole.
# Everything is in the component "gtrace": third-party install rules (if any) never reach the package.
include(GNUInstallDirs)

set(GT_INSTALL_COMPONENT gtrace)
set(GT_INSTALL_TARGETS "")
foreach(t gcollect gtrace gtrace-counters gtrace-ui)
  if(TARGET ${t})
    list(APPEND GT_INSTALL_TARGETS ${t})
  endif()
endforeach()
install(TARGETS ${GT_INSTALL_TARGETS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT ${GT_INSTALL_COMPONENT})
if(TARGET gtrace_inject)
  install(TARGETS gtrace_inject LIBRARY DESTINATION ${GT_INJECT_INSTALL_DIR} COMPONENT ${GT_INSTALL_COMPONENT}
          NAMELINK_SKIP)
endif()
# --trace=osrt's shim: gcollect looks for it beside the injection library (launcher OsrtShimPath).
if(TARGET gtrace_osrt)
  install(TARGETS gtrace_osrt LIBRARY DESTINATION ${GT_INJECT_INSTALL_DIR} COMPONENT ${GT_INSTALL_COMPONENT}
          NAMELINK_SKIP)
endif()

# The page comes from the wasm build (scripts/web-test.sh and scripts/main.sh build it into build/wasm/web; the
# native tree never compiles it twice). Checked at install time, so the wasm build may run after configuring.
set(GT_WEB_DIR "${CMAKE_SOURCE_DIR}/build/wasm/web" CACHE PATH
    "A built viewer page (the wasm preset's build/wasm/web) to install as share/gtrace/web")
# build/wasm/web is also the web/ folder's binary dir (CMakeFiles/, ...): only the page's files are taken.
set(GT_WEB_FILES index.html app.js style.css gtrace.js gtrace.wasm gtrace-mt.js gtrace-mt.wasm gtrace-mt.worker.js)
list(TRANSFORM GT_WEB_FILES PREPEND "${GT_WEB_DIR}/")
install(FILES ${GT_WEB_FILES} DESTINATION ${CMAKE_INSTALL_DATADIR}/gtrace/web COMPONENT ${GT_INSTALL_COMPONENT}
        OPTIONAL)
install(CODE "
  if(NOT EXISTS \"${GT_WEB_DIR}/index.html\" OR NOT EXISTS \"${GT_WEB_DIR}/gtrace.wasm\")
    message(WARNING \"gtrace: no built viewer page in ${GT_WEB_DIR} (build the wasm preset, or set GT_WEB_DIR): \"
                    \"the install has no share/gtrace/web, and gtrace serve will need --web-root\")
  endif()" COMPONENT ${GT_INSTALL_COMPONENT})

install(FILES "${CMAKE_SOURCE_DIR}/packaging/gtrace-serve.service" DESTINATION lib/systemd/system
        COMPONENT ${GT_INSTALL_COMPONENT})
install(FILES "${CMAKE_SOURCE_DIR}/packaging/gtrace-serve.default" DESTINATION ${CMAKE_INSTALL_DATADIR}/gtrace
        COMPONENT ${GT_INSTALL_COMPONENT})
install(FILES "${CMAKE_SOURCE_DIR}/README.md" DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT ${GT_INSTALL_COMPONENT})
install(DIRECTORY "${CMAKE_SOURCE_DIR}/docs/" DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT ${GT_INSTALL_COMPONENT}
        FILES_MATCHING PATTERN "*.md")

# --- Debian package: gtrace_<version>_amd64.deb (cpack --config build/native/CPackConfig.cmake) ------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gtrace)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gtrace maintainers <gtrace@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU profiler: gcollect (CUPTI collector), gtrace CLI and share server, viewer")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "gcollect records a CUDA application's kernels, memory copies, API calls and NVTX ranges through CUPTI into\n"
    "a .gtrace file; gtrace summarizes, diffs and exports traces and serves the browser viewer.\n"
    "Built with CUDA ${GT_CUDA_VERSION_STRING}: it needs NVIDIA's driver (R580 or newer) and CUPTI\n"
    "(libcupti.so.13, from NVIDIA's CUDA toolkit) on the machine that records; neither is a Debian package,\n"
    "so they are not package dependencies. Without them gcollect still runs the app and says why no GPU\n"
    "activity was recorded.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # gtrace_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/gtrace/gtrace")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_MONOLITHIC_INSTALL ON)  # one package; no third-party install rules reach it (checked by package-test.sh)
# Dependencies from dpkg-shlibdeps (zstd, zlib, cpp-httplib, OpenSSL, GLFW, ...). libcupti is NVIDIA's, in no
# Debian package: packaging/shlibdeps.sh hides it from dpkg-shlibdeps and the package description says so.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
