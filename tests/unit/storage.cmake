# storage: the pure logic of the store (row mapping, migrations, URLs), the
# store against a real embedded PostgreSQL (LABELS integration), and the check
# that no loop-thread object of the store calls anything that blocks.
cs_unit_test(store SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_store.c LIBS cs_store)

add_executable(test_store_pg ${CMAKE_CURRENT_SOURCE_DIR}/test_store_pg.c)
target_link_libraries(test_store_pg PRIVATE cs_store cs_base PkgConfig::CMOCKA cs_warnings)
add_test(NAME integration_store_pg COMMAND test_store_pg)
set_tests_properties(integration_store_pg PROPERTIES LABELS integration TIMEOUT 300)

add_test(NAME unit_store_loop_symbols
         COMMAND sh ${PROJECT_SOURCE_DIR}/tests/lib/check_loop_symbols.sh
                 $<TARGET_OBJECTS:cs_store>
         COMMAND_EXPAND_LISTS)
set_tests_properties(unit_store_loop_symbols PROPERTIES LABELS unit TIMEOUT 60)
