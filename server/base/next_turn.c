/* next_turn: an idle handle, stopped before its callback runs. */
#include "next_turn.h"

#include "util.h"

static void idle_cb(uv_idle_t *idle)
{
    struct cs_next_turn *turn = idle->data;
    CS_ASSERT(uv_idle_stop(idle) == 0);
    turn->cb(turn);
}

int cs_next_turn_init(uv_loop_t *loop, struct cs_next_turn *turn, cs_next_turn_cb cb)
{
    turn->cb = cb;
    turn->idle.data = turn;
    return uv_idle_init(loop, &turn->idle);
}

void cs_next_turn_ask(struct cs_next_turn *turn)
{
    CS_ASSERT(uv_idle_start(&turn->idle, idle_cb) == 0);
}

void cs_next_turn_cancel(struct cs_next_turn *turn)
{
    CS_ASSERT(uv_idle_stop(&turn->idle) == 0);
}

bool cs_next_turn_asked(const struct cs_next_turn *turn)
{
    return uv_is_active((const uv_handle_t *)&turn->idle) != 0;
}

void cs_next_turn_close(struct cs_next_turn *turn)
{
    uv_close((uv_handle_t *)&turn->idle, NULL);
}
