# The minder's unit tests: the status note's format and files (test_note), and
# the real static csched-minder run on real commands (test_minder).
cs_unit_test(note SOURCES test_note.c LIBS cs_note)

cs_unit_test(minder SOURCES test_minder.c LIBS cs_note)
add_dependencies(test_minder csched_minder)
target_compile_definitions(test_minder PRIVATE CS_MINDER_PATH="${CS_MINDER_PATH}")
