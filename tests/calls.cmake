# The call-circle check (tests/check_calls.sh): no two objects of server/,
# storage/, client/ or minder/ call each other, no longer circle either, and
# no global symbol is defined by two of their source files. It reads the
# objects of every static library, object library and executable defined in
# those folders and in the folders below them (cs_targets_below), so a
# module or a folder added later is checked too.
# Included by tests/CMakeLists.txt once every folder has defined its targets.
set(cs_calls_objects "")
foreach(cs_dir server storage client minder)
  cs_targets_below(${PROJECT_SOURCE_DIR}/${cs_dir} cs_targets)
  foreach(cs_target ${cs_targets})
    get_target_property(cs_type ${cs_target} TYPE)
    if(cs_type MATCHES "^(STATIC_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      list(APPEND cs_calls_objects $<TARGET_OBJECTS:${cs_target}>)
    endif()
  endforeach()
endforeach()
add_test(NAME unit_calls COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_calls.sh ${cs_calls_objects}
         COMMAND_EXPAND_LISTS)
set_tests_properties(unit_calls PROPERTIES LABELS unit TIMEOUT 60)

# The check must be able to fail: a pair that calls each other, a circle of
# three and a symbol defined twice, compiled in a temp dir, must each be
# reported, and two files of one name in two folders must not be taken for
# one.
add_test(NAME unit_calls_negative
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_calls_negative.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_calls.sh ${CMAKE_C_COMPILER})
set_tests_properties(unit_calls_negative PROPERTIES LABELS unit TIMEOUT 60)
