# gt_test_fixtures(TARGET): the real traces of tests/data (.gtrace, .json, .json.gz) as a C array initializer,
# fixtures.inc in the caller's binary folder, and GT_TESTS_DATA, for a test executable. Enumerated when CMake
# configures, so a fixture that goes missing fails a test rather than being skipped.
function(gt_test_fixtures target)
  file(GLOB fixtures "${CMAKE_SOURCE_DIR}/tests/data/*.gtrace" "${CMAKE_SOURCE_DIR}/tests/data/*.json"
       "${CMAKE_SOURCE_DIR}/tests/data/*.json.gz")
  list(SORT fixtures)
  set(text "")
  foreach(f ${fixtures})
    string(APPEND text "\"${f}\",\n")
  endforeach()
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/fixtures.inc CONTENT "${text}")
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
  target_compile_definitions(${target} PRIVATE GT_TESTS_DATA="${CMAKE_SOURCE_DIR}/tests/data")
endfunction()
