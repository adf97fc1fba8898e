cs_unit_test(reflection SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_reflection.c LIBS cs_rpc)
