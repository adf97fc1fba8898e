/* fuzz_jobfile: the CLI's YAML job-file parser (client/cli/jobfile.c) over
 * any bytes, as "csched apply -f" reads a file. Every job it accepts must
 * pack into a request: a string left NULL would crash protobuf-c there, in
 * the client, not here. Frees what it parsed; no files. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Csched__V1__Job **jobs;
    size_t n;
    char err[512];

    if (cs_cli_jobfile_parse("jobs.yaml", (const char *)data, size, &jobs, NULL, &n, err,
                             sizeof(err)) != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = csched__v1__job__get_packed_size(jobs[i]);
        uint8_t *buf = malloc(len ? len : 1);
        if (buf == NULL || csched__v1__job__pack(jobs[i], buf) != len)
            abort();
        free(buf);
    }
    cs_cli_jobs_free(jobs, n);
    return 0;
}
