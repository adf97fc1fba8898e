# The layer check (tests/check_layers.py): every include and link of the
# tree follows an arrow of tests/layers.txt (server's folders among
# themselves; storage, minder and client never server/; the minder nothing
# but libc), and server/README.md's table says the same. Included last by tests/CMakeLists.txt, when every
# folder has defined its targets.
#
# The link graph is written at generate time to layers_links.txt, one line
# per target of the tree: its folder, its name, then what it links
# (LINK_LIBRARIES) and what it passes on (INTERFACE_LINK_LIBRARIES, where
# CMake writes a private dependency of a static library as $<LINK_ONLY:x>).

cs_targets_below(${PROJECT_SOURCE_DIR} cs_layers_all)
set(cs_layers_lines "")
foreach(cs_target ${cs_layers_all})
  get_target_property(cs_dir ${cs_target} SOURCE_DIR)
  get_target_property(cs_type ${cs_target} TYPE)
  if(cs_type STREQUAL "UTILITY")
    continue() # custom targets link nothing
  endif()
  file(RELATIVE_PATH cs_folder ${PROJECT_SOURCE_DIR} ${cs_dir})
  if(cs_folder STREQUAL "")
    set(cs_folder ".")
  endif()
  # What it links itself, and what it hands on to those linking it.
  set(cs_links "$<JOIN:$<TARGET_PROPERTY:${cs_target},INTERFACE_LINK_LIBRARIES>, >")
  if(NOT cs_type STREQUAL "INTERFACE_LIBRARY")
    string(PREPEND cs_links "$<JOIN:$<TARGET_PROPERTY:${cs_target},LINK_LIBRARIES>, > ")
  endif()
  string(APPEND cs_layers_lines "${cs_folder} ${cs_target} ${cs_links}\n")
endforeach()
set(CS_LAYERS_LINKS ${CMAKE_CURRENT_BINARY_DIR}/layers_links.txt)
file(GENERATE OUTPUT ${CS_LAYERS_LINKS} CONTENT "${cs_layers_lines}")

add_test(NAME unit_layers
         COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/check_layers.py ${PROJECT_SOURCE_DIR}
                 ${CS_LAYERS_LINKS})
set_tests_properties(unit_layers PROPERTIES LABELS unit TIMEOUT 60)

# The check must be able to fail: on a copy of the tree with a forbidden
# include and a forbidden link added, it must report both.
add_test(NAME unit_layers_negative
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/check_layers_negative.sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/check_layers.py ${PROJECT_SOURCE_DIR}
                 ${CS_LAYERS_LINKS})
set_tests_properties(unit_layers_negative PROPERTIES LABELS unit TIMEOUT 60)
