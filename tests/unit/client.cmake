# libcsched and csched CLI unit tests: no server, no network.
# The CLI's reading of its arguments, and what it writes and exits with.
foreach(cs_concern args output jobstop)
  cs_unit_test(cli_${cs_concern} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli_${cs_concern}.c
               ${CMAKE_CURRENT_LIST_DIR}/cli_fixture.c LIBS cs_cli)
endforeach()
cs_unit_test(cli_jobfile SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli_jobfile.c
             LIBS cs_cli)
# The core's internal helpers (cs__*) are hidden in libcsched.so, so this
# test links the objects themselves.
cs_unit_test(client SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_client.c
             LIBS cs_client_core cs_client_msgs cs_grpc_locks PkgConfig::GRPC PkgConfig::PROTOBUF_C
                  Threads::Threads)
target_include_directories(test_client PRIVATE ${CMAKE_SOURCE_DIR}/client
                           ${CMAKE_SOURCE_DIR}/client/include ${CMAKE_BINARY_DIR}/client/include)
# gRPC's locks without abseil's deadlock detection.
cs_unit_test(grpc_locks SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_grpc_locks.c
             LIBS cs_grpc_locks PkgConfig::GRPC)
