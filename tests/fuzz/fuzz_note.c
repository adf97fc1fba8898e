/* fuzz_note: the status-note parser (minder/note.c) over any bytes, as the
 * server reads a note the minder left behind. A note it accepts must come
 * back unchanged through cs_note_format and cs_note_parse again: writer and
 * reader share one table, and this holds them to it. No files, no state. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "note.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_note(const struct cs_note *a, const struct cs_note *b)
{
    return a->outcome == b->outcome && a->exit_code == b->exit_code &&
           a->term_signal == b->term_signal && a->started_unix_ms == b->started_unix_ms &&
           a->ended_unix_ms == b->ended_unix_ms && a->user_cpu_ms == b->user_cpu_ms &&
           a->system_cpu_ms == b->system_cpu_ms && a->max_rss_kb == b->max_rss_kb &&
           a->stdout_truncated == b->stdout_truncated &&
           a->stderr_truncated == b->stderr_truncated &&
           a->leftover_processes == b->leftover_processes && strcmp(a->message, b->message) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cs_note note, again;
    char text[CS_NOTE_MAX_BYTES];

    if (cs_note_parse((const char *)data, size, &note) != 0)
        return 0;
    int len = cs_note_format(&note, text, sizeof(text));
    if (len < 0 || cs_note_parse(text, (size_t)len, &again) != 0 || !same_note(&note, &again))
        abort(); /* accepted, but not written back the same */
    return 0;
}
