# Turns protoc's FileDescriptorSet into a C array for server reflection,
# run at build time as
#   cmake -DIN=set.pb -DOUT=file.c -P embed_descriptors.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR len "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n    "
       hex "${hex}")
file(WRITE ${OUT}.tmp
  "/* Generated from protoc's descriptor set by embed_descriptors.cmake; do not edit. */\n"
  "#include <stddef.h>\n#include <stdint.h>\n\n"
  "extern const uint8_t cs_descriptor_set[];\nextern const size_t cs_descriptor_set_len;\n\n"
  "const uint8_t cs_descriptor_set[] = {\n    ${hex}};\n\n"
  "const size_t cs_descriptor_set_len = ${len};\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
