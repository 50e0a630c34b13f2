// Catch2's runner, compiled once for every test executable (its single header costs ~25 s per translation unit).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
