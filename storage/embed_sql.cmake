# Turns the migration files into a C table, run at build time as
#   cmake -DOUT=file.c -DSOURCES="a.sql;b.sql" -P embed_sql.cmake
# Each file is named NNNN_<what>.sql; NNNN is its version. The files arrive
# sorted by name, so the table is in version order (migrate.c checks it).
set(body "")
set(table "")
set(count 0)
foreach(src ${SOURCES})
  get_filename_component(base ${src} NAME)
  if(NOT base MATCHES "^([0-9]+)_([A-Za-z0-9_]+)\\.sql$")
    message(FATAL_ERROR "migration ${base}: name must be NNNN_<what>.sql")
  endif()
  set(digits ${CMAKE_MATCH_1})
  set(what ${CMAKE_MATCH_2})
  string(REGEX REPLACE "^0+([0-9])" "\\1" version ${digits})
  file(READ ${src} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n    "
         hex "${hex}")
  string(APPEND body "static const char sql_${count}[] = {\n    ${hex}0x00};\n\n")
  string(APPEND table "    {${version}, \"${what}\", sql_${count}},\n")
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no migrations given")
endif()
file(WRITE ${OUT}.tmp
  "/* Generated from storage/migrations by embed_sql.cmake; do not edit. */\n"
  "#include \"migrate.h\"\n\n${body}"
  "const struct cs_store_migration cs_store_migrations[] = {\n${table}};\n\n"
  "const size_t cs_store_migrations_count = ${count};\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
