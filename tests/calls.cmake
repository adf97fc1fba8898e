# The call-circle check (tests/check_calls.sh): no two objects of server/ or
# storage/ call each other, and no longer circle either. It reads the objects
# of every static library and executable those folders define, so a module
# added later is checked too. Included by tests/CMakeLists.txt once every
# folder has defined its targets.
set(cs_calls_objects "")
foreach(cs_dir server storage)
  cs_targets_below(${PROJECT_SOURCE_DIR}/${cs_dir} cs_targets)
  foreach(cs_target ${cs_targets})
    get_target_property(cs_type ${cs_target} TYPE)
    if(cs_type STREQUAL "STATIC_LIBRARY" OR cs_type STREQUAL "EXECUTABLE")
      list(APPEND cs_calls_objects $<TARGET_OBJECTS:${cs_target}>)
    endif()
  endforeach()
endforeach()
add_test(NAME unit_calls COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_calls.sh ${cs_calls_objects}
         COMMAND_EXPAND_LISTS)
set_tests_properties(unit_calls PROPERTIES LABELS unit TIMEOUT 60)

# The check must be able to fail: a pair that calls each other and a circle
# of three, compiled in a temp dir, must both be reported.
add_test(NAME unit_calls_negative
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_calls_negative.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_calls.sh ${CMAKE_C_COMPILER})
set_tests_properties(unit_calls_negative PROPERTIES LABELS unit TIMEOUT 60)
