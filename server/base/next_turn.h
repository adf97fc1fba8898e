/* next_turn: work that goes on in the next loop turn, after the timers and
 * the I/O that came due meanwhile, so that a budget per turn bounds how
 * long the loop is away. A zero timer started from its own callback does
 * not give that: libuv before 1.48 (Debian 12 has 1.44) runs it again in
 * the same pass over the timers, before any I/O and before any timer that
 * came due while it ran, such as the lag probe's. An idle handle runs once
 * a turn and keeps that turn's poll from blocking. Loop thread only. */
#ifndef CS_NEXT_TURN_H
#define CS_NEXT_TURN_H

#include <stdbool.h>
#include <uv.h>

struct cs_next_turn;
typedef void (*cs_next_turn_cb)(struct cs_next_turn *turn);

struct cs_next_turn {
    uv_idle_t idle;
    cs_next_turn_cb cb;
};

/* Sets turn up, not asked. 0 or a negative errno from uv_idle_init. */
int cs_next_turn_init(uv_loop_t *loop, struct cs_next_turn *turn, cs_next_turn_cb cb);
/* Has cb run once in the next turn; asking again before it ran is a no-op. */
void cs_next_turn_ask(struct cs_next_turn *turn);
/* Takes an ask back: nothing is left to do. */
void cs_next_turn_cancel(struct cs_next_turn *turn);
/* Whether cb is asked for and has not run yet. */
bool cs_next_turn_asked(const struct cs_next_turn *turn);
/* Closes the handle; cb does not run after this. */
void cs_next_turn_close(struct cs_next_turn *turn);

#endif
