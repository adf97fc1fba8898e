# CSCHED_FUZZ: a clang build for the libFuzzer targets of tests/fuzz/
# (see its README.md). Included by the top CMakeLists.txt before any target
# is defined, so every library is compiled for coverage and the sanitizers;
# only the fuzz targets link libFuzzer itself. Off, it changes nothing.
option(CSCHED_FUZZ "Build the libFuzzer targets of tests/fuzz (needs clang)" OFF)
if(CSCHED_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "CSCHED_FUZZ=ON needs clang, for libFuzzer; this build uses "
                        "${CMAKE_C_COMPILER_ID}. Configure a build dir of its own with "
                        "-DCMAKE_C_COMPILER=clang -DCSCHED_FUZZ=ON.")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
