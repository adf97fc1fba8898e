# server: one executable per module with logic of its own, and the check that
# no object of the server that runs on the loop thread calls anything that
# blocks or starts processes.
set(CS_SERVER_DIR ${PROJECT_SOURCE_DIR}/server)

cs_unit_test(probe SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_probe.c LIBS cs_probe)
cs_unit_test(idmap SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_idmap.c LIBS cs_idmap)
cs_unit_test(env SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_env.c LIBS cs_env)
cs_unit_test(job SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_job.c LIBS cs_env)
cs_unit_test(config SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_config.c LIBS cs_config)
cs_unit_test(status SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_status.c LIBS cs_rpc)
cs_unit_test(mailbox SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_mailbox.c LIBS cs_mailbox)

# cs_core bundles dispatch, the API and the store: the pump is compiled here on
# its own, and the test supplies cs_dispatch_start itself.
cs_unit_test(pump SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_pump.c ${CS_SERVER_DIR}/pump.c
             LIBS cs_env)

# Every object of every static library defined in server/ (so a module added
# later is checked too), except *_thread.c and *_work.c files, which the
# script skips; main.c belongs to cschedd, not to a library.
get_property(cs_server_targets DIRECTORY ${CS_SERVER_DIR} PROPERTY BUILDSYSTEM_TARGETS)
set(cs_server_objects "")
foreach(cs_target ${cs_server_targets})
  get_target_property(cs_type ${cs_target} TYPE)
  if(cs_type STREQUAL "STATIC_LIBRARY")
    list(APPEND cs_server_objects $<TARGET_OBJECTS:${cs_target}>)
  endif()
endforeach()
add_test(NAME unit_server_loop_symbols
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/lib/check_loop_symbols.sh ${cs_server_objects}
         COMMAND_EXPAND_LISTS)
set_tests_properties(unit_server_loop_symbols PROPERTIES LABELS unit TIMEOUT 120)
