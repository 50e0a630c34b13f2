# Third-party libraries: Debian packages natively; Debian *sources* (fetched by scripts/setup.sh) under Emscripten.

# --- zstd -------------------------------------------------------------------------------------------------------
if(EMSCRIPTEN)
  # Decoder only: the browser reads traces, it never writes them.
  file(GLOB GT_ZSTD_SRC "${GT_THIRD_PARTY}/zstd/lib/common/*.c" "${GT_THIRD_PARTY}/zstd/lib/decompress/*.c")
  if(NOT GT_ZSTD_SRC)
    message(FATAL_ERROR "zstd sources missing under ${GT_THIRD_PARTY}/zstd: run scripts/setup.sh")
  endif()
  add_library(gt_zstd STATIC ${GT_ZSTD_SRC})
  target_include_directories(gt_zstd SYSTEM PUBLIC "${GT_THIRD_PARTY}/zstd/lib")
  target_compile_definitions(gt_zstd PRIVATE ZSTD_DISABLE_ASM ZSTD_MULTITHREAD=0)
  target_compile_options(gt_zstd PRIVATE -O2 -w)
  add_library(gt::zstd ALIAS gt_zstd)
  set(GT_HAVE_ZSTD_COMPRESS OFF)
else()
  find_path(ZSTD_INCLUDE_DIR zstd.h REQUIRED)
  find_library(ZSTD_LIBRARY NAMES zstd REQUIRED)
  add_library(gt_zstd INTERFACE)
  target_include_directories(gt_zstd INTERFACE ${ZSTD_INCLUDE_DIR})
  target_link_libraries(gt_zstd INTERFACE ${ZSTD_LIBRARY})
  add_library(gt::zstd ALIAS gt_zstd)
  set(GT_HAVE_ZSTD_COMPRESS ON)
endif()

# --- zlib (gzip'd Chrome / Kineto JSON) --------------------------------------------------------------------------
if(EMSCRIPTEN)
  set(GT_ZLIB_NAMES adler32 crc32 inffast inflate inftrees zutil uncompr gzlib gzread)
  set(GT_ZLIB_SRC "")
  foreach(n ${GT_ZLIB_NAMES})
    list(APPEND GT_ZLIB_SRC "${GT_THIRD_PARTY}/zlib/${n}.c")
  endforeach()
  add_library(gt_zlib STATIC ${GT_ZLIB_SRC})
  target_include_directories(gt_zlib SYSTEM PUBLIC "${GT_THIRD_PARTY}/zlib")
  target_compile_options(gt_zlib PRIVATE -O2 -w)
  add_library(gt::zlib ALIAS gt_zlib)
else()
  find_package(ZLIB REQUIRED)
  add_library(gt::zlib ALIAS ZLIB::ZLIB)
endif()

# --- ISA-L's igzip: native gzip inflation (viewer/core/src/inflate.h), opened at run time (libisal.so.2), so
# only its header is needed here and zlib inflates where the library is missing (and in wasm). ------------------
if(NOT EMSCRIPTEN)
  find_path(ISAL_INCLUDE_DIR isa-l/igzip_lib.h)
  if(ISAL_INCLUDE_DIR)
    add_library(gt_isal INTERFACE)
    target_include_directories(gt_isal SYSTEM INTERFACE ${ISAL_INCLUDE_DIR})
    target_link_libraries(gt_isal INTERFACE ${CMAKE_DL_LIBS})
    target_compile_definitions(gt_isal INTERFACE GT_HAVE_ISAL=1)
    add_library(gt::isal ALIAS gt_isal)
  else()
    message(STATUS "gtrace: ISA-L's header (libisal-dev) not found: gzip is inflated with zlib, several times slower")
  endif()
endif()

# --- nlohmann-json ------------------------------------------------------------------------------------------------
add_library(gt_json INTERFACE)
if(EMSCRIPTEN)
  # A folder holding only the nlohmann headers, so em++ never sees the host's /usr/include.
  target_include_directories(gt_json SYSTEM INTERFACE "${GT_THIRD_PARTY}/nlohmann-include")
else()
  find_package(nlohmann_json 3.10 REQUIRED)
  target_link_libraries(gt_json INTERFACE nlohmann_json::nlohmann_json)
endif()
add_library(gt::json ALIAS gt_json)

# --- Catch2 (v2 from bookworm) ------------------------------------------------------------------------------------
if(GT_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
  include(Catch)
endif()
if(EMSCRIPTEN)  # tests/wasm: the single header alone (scripts/setup.sh), so em++ never sees /usr/include
  add_library(gt_catch_wasm INTERFACE)
  target_include_directories(gt_catch_wasm SYSTEM INTERFACE "${GT_THIRD_PARTY}/catch2-include")
endif()

# --- Dear ImGui (sources from Debian's source package) ------------------------------------------------------------
if(GT_BUILD_UI)
  set(GT_IMGUI_DIR "${GT_THIRD_PARTY}/imgui")
  if(NOT EXISTS "${GT_IMGUI_DIR}/imgui.cpp")
    message(FATAL_ERROR "Dear ImGui sources missing under ${GT_IMGUI_DIR}: run scripts/setup.sh")
  endif()
endif()
