# The error-convention check (tests/check_errors.sh): in server/, storage/,
# client/ and minder/, no bare "return -1;", no cs_ or uv_ call's -errno
# negated, and no flag parser of the CLI returning other than a
# cs_cli_flag_result or a negative errno. It reads the sources, so it needs
# no build.
add_test(NAME unit_errors
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_errors.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(unit_errors PROPERTIES LABELS unit TIMEOUT 60)

# The check must be able to fail: each offence, written into a small tree,
# must be reported, and the same tree written to the convention must pass.
add_test(NAME unit_errors_negative
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_errors_negative.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_errors.sh)
set_tests_properties(unit_errors_negative PROPERTIES LABELS unit TIMEOUT 60)
