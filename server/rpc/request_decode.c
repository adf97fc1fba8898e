/* request_decode: see request_decode.h. */
#include "request_decode.h"

#include <errno.h>
#include <stdio.h>

#include "map_fold.h"
#include "wire_check.h"

ProtobufCMessage *cs_request_decode(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                                    size_t len, char *why, size_t cap)
{
    char field[200];
    int rc = cs_wire_check_strings(desc, data, len, field, sizeof(field));
    if (rc == -EBADMSG)
        (void)snprintf(why, cap, "the request is not a valid %s message: %s%shas field number 0",
                       desc->name, field, field[0] != '\0' ? " " : "");
    else if (rc == -E2BIG)
        (void)snprintf(why, cap, "field %s has more than %d entries, the limit for any field",
                       field, CS_WIRE_REPEATED_MAX);
    else if (rc == -ERANGE)
        (void)snprintf(why, cap, "field %s is a 32-bit number: its value does not fit", field);
    else if (rc != 0)
        (void)snprintf(why, cap, "field %s holds a NUL byte or is not valid UTF-8", field);
    if (rc != 0)
        return NULL;
    ProtobufCMessage *msg = protobuf_c_message_unpack(desc, NULL, len, data);
    if (msg == NULL) {
        (void)snprintf(why, cap, "the request is not a valid %s message", desc->name);
        return NULL;
    }
    cs_map_fold(msg);
    return msg;
}
