# The minder's unit tests: the status note's format and files (test_note),
# the real static csched-minder run on real commands (test_minder), and the
# contract the server and the minder share (test_minder_contract).
cs_unit_test(note SOURCES test_note.c LIBS cs_note)

cs_unit_test(minder SOURCES test_minder.c LIBS cs_note)
add_dependencies(test_minder csched_minder)
target_compile_definitions(test_minder PRIVATE CS_MINDER_PATH="${CS_MINDER_PATH}")

# What the minder finds pending at its start, before its own session.
cs_unit_test(minder_session SOURCES test_minder_session.c LIBS cs_note)
add_dependencies(test_minder_session csched_minder)
target_compile_definitions(test_minder_session PRIVATE CS_MINDER_PATH="${CS_MINDER_PATH}")

# The contract between server and minder: the argv built, the attempt
# directory's path and parser, and the real minder taking the argv.
cs_unit_test(minder_contract SOURCES test_minder_contract.c LIBS cs_note)
add_dependencies(test_minder_contract csched_minder)
target_compile_definitions(test_minder_contract PRIVATE CS_MINDER_PATH="${CS_MINDER_PATH}")

# The minder's privilege drop, each step made to fail through a fake table,
# and the real minder whose drop is refused.
cs_unit_test(minder_drop SOURCES test_minder_drop.c LIBS cs_minder_drop cs_note)
add_dependencies(test_minder_drop csched_minder)
target_compile_definitions(test_minder_drop PRIVATE CS_MINDER_PATH="${CS_MINDER_PATH}")
