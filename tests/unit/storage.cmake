# storage: the pure logic of the store (row mapping, migrations, URLs), and
# the check that no loop-thread object of the store calls anything that
# blocks. The store against a real PostgreSQL is in tests/integration.
cs_unit_test(store SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_store.c LIBS cs_store)

add_test(NAME unit_store_loop_symbols
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/lib/check_loop_symbols.sh
                 $<TARGET_OBJECTS:cs_store>
         COMMAND_EXPAND_LISTS)
set_tests_properties(unit_store_loop_symbols PROPERTIES LABELS unit TIMEOUT 60)

# The database backend's priority: only the listener's child gets it.
cs_unit_test(store_backend SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_store_backend.c
             LIBS cs_store cs_testlib)

# The store's state machine: every cell of its two transition tables.
cs_unit_test(store_state SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_store_state.c LIBS cs_store)
