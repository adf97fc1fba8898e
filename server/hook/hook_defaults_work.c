/* hook_defaults_work: --default-hooks read and checked (see
 * hook_defaults.h). Blocking: runs once at start, before the loop. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook_defaults.h"
#include "hook_spec.h"
#include "json_codec.h"

/* Only hooks: a default file that sets anything else is a mistake. */
static bool only_hooks(const Csched__V1__Job *job)
{
    Csched__V1__Job bare = *job;
    bare.n_hooks = 0;
    bare.hooks = NULL;
    return protobuf_c_message_get_packed_size(&bare.base) == 0;
}

int cs_hook_defaults_load(const char *path, Csched__V1__Job **out, struct cs_err *err)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return cs_err_set(err, -errno, "--default-hooks %s: %s", path, strerror(errno));
    char *text = cs_xmalloc(CS_HOOK_DEFAULTS_MAX_BYTES + 1);
    size_t len = fread(text, 1, CS_HOOK_DEFAULTS_MAX_BYTES + 1, f);
    int rc = ferror(f) ? -EIO : 0;
    (void)fclose(f); /* read only */
    if (rc != 0) {
        rc = cs_err_set(err, rc, "--default-hooks %s: reading it failed", path);
        goto out_free;
    }
    if (len > CS_HOOK_DEFAULTS_MAX_BYTES) {
        rc = cs_err_set(err, -EFBIG, "--default-hooks %s: larger than %d bytes", path,
                        CS_HOOK_DEFAULTS_MAX_BYTES);
        goto out_free;
    }
    ProtobufCMessage *msg = NULL;
    struct cs_json_error jerr = {0};
    if (cs_json_read_message(text, len, &csched__v1__job__descriptor, &msg, &jerr) != 0) {
        rc = cs_err_set(err, -EINVAL, "--default-hooks %s: %s%s%s", path, jerr.field,
                        jerr.field[0] != '\0' ? ": " : "", jerr.why);
        goto out_free;
    }
    Csched__V1__Job *job = (Csched__V1__Job *)msg;
    if (job->n_hooks == 0 || !only_hooks(job)) {
        rc = cs_err_set(err, -EINVAL,
                        "--default-hooks %s: must hold {\"hooks\": [...]} and nothing else", path);
    } else if ((rc = cs_hooks_validate(job, err)) != 0) {
        char why[sizeof(err->msg)];
        (void)snprintf(why, sizeof(why), "%s", err->msg);
        rc = cs_err_set(err, rc, "--default-hooks %s: %s", path, why);
    }
    if (rc == 0)
        *out = job;
    else
        protobuf_c_message_free_unpacked(msg, NULL);
out_free:
    free(text);
    return rc;
}
