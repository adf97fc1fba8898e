/* proc_facts: what /proc/self says about cschedd for the metrics endpoint:
 * CPU time, start time, memory, file descriptors and threads. It reads
 * files, so it runs off the loop (the HTTP thread). */
#ifndef CS_PROC_FACTS_H
#define CS_PROC_FACTS_H

#include "metrics_format.h"

/* Fills out; out->ok is false when /proc/self/stat could not be read. */
void cs_proc_facts_read(struct cs_proc_facts *out);

#endif
